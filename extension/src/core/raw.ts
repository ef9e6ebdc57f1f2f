/**
 * A line of a CLI answer as read: any field may be missing or of another type, but only the
 * names its declaration has (core/generated/, written from pyserver/rankdebug/protocol/)
 * may be read, so `tsc` refuses a name the answer does not have. No `vscode` import.
 */
export type Raw<T> = Partial<Record<keyof T, unknown>>;
