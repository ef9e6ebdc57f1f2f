/**
 * The extension's settings as typed values, and the camelCase object the language server
 * reads (`rankdebug.lsp.settings` on the Python side). No `vscode` import.
 */

export type AttachOn = 'start' | 'hit';

export interface ExtensionSettings {
    /** Interpreter path; "" means: the Python extension's, else python3. */
    python: string;
    host: string;
    basePort: number;
    waitForClient: boolean;
    /** Seconds; null keeps `rankdebug launch`'s default (one day). */
    collectiveTimeout: number | null;
    justMyCode: boolean;
    rememberRanks: boolean;
    attachOn: AttachOn;
    codeLens: boolean;
    terminalShim: boolean;
    offerDebugOnFailure: boolean;
}

export const DEFAULTS: ExtensionSettings = {
    python: '',
    host: '127.0.0.1',
    basePort: 0,
    waitForClient: true,
    collectiveTimeout: null,
    justMyCode: true,
    rememberRanks: true,
    attachOn: 'start',
    codeLens: true,
    terminalShim: true,
    offerDebugOnFailure: true,
};

/** Reads settings through `get(key)`, falling back to the default for missing or ill-typed values. */
export function readSettings(get: (key: keyof ExtensionSettings) => unknown): ExtensionSettings {
    const out: Record<string, unknown> = { ...DEFAULTS };
    for (const key of Object.keys(DEFAULTS) as (keyof ExtensionSettings)[]) {
        const value = get(key);
        const def = DEFAULTS[key];
        if (value === undefined) continue;
        if (key === 'collectiveTimeout') {
            if (value === null || (typeof value === 'number' && value >= 0)) out[key] = value;
        } else if (key === 'attachOn') {
            if (value === 'start' || value === 'hit') out[key] = value;
        } else if (key === 'basePort') {
            if (typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= 65535) out[key] = value;
        } else if (typeof value === typeof def) {
            out[key] = value;
        }
    }
    return out as unknown as ExtensionSettings;
}

/**
 * The settings object the server understands.
 * `interpreter` is the argv prefix that runs the rankdebug CLI (python + the bundled entry script).
 */
export function toServerSettings(s: ExtensionSettings, interpreter: string[], workspace?: string): Record<string, unknown> {
    const out: Record<string, unknown> = {
        interpreter,
        host: s.host || '127.0.0.1',
        basePort: s.basePort,
        wait: s.waitForClient,
        collectiveTimeout: s.collectiveTimeout,
        attachOn: s.attachOn,
        codeLens: s.codeLens,
    };
    if (workspace) out.workspace = workspace;
    return out;
}
