/** `vscode.l10n` as the modules without a `vscode` import take it: `t` fills `{0}`, `{1}`… from its arguments. */
export interface Localize {
    t(message: string, ...args: Array<string | number | boolean>): string;
}
