/**
 * The extension's settings as typed values, and the camelCase object the language server
 * reads (`rankdebug.lsp.settings` on the Python side: its `_FIELDS` table and `Settings`
 * defaults). No `vscode` import.
 *
 * One home per setting: its type and default in package.json `contributes.configuration`,
 * the same default in `DEFAULTS` here and in the server's `Settings`; `toServerSettings` is
 * the one way settings reach the server (initializationOptions, didChangeConfiguration and
 * the answer to `workspace/configuration`).
 */

export type AttachOn = 'start' | 'hit';
/** When one chosen rank stops: the other chosen ranks pause too (together), or run on (alone). */
export type StopRanks = 'together' | 'alone';
export type UnknownValues = 'off' | 'hint' | 'info' | 'warning';
export type ShowNotifications = 'off' | 'onError' | 'onWarning' | 'always';

export interface ExtensionSettings {
    /** Interpreter path; "" means: the Python extension's, else python3. */
    python: string;
    host: string;
    basePort: number;
    waitForClient: boolean;
    /** Seconds; null keeps `rankdebug launch`'s default (one day). */
    collectiveTimeout: number | null;
    /** Seconds with no rank making progress before a launched job is said to hang (`rankdebug launch --hang-seconds`); 0: off. */
    hangSeconds: number;
    justMyCode: boolean;
    rememberRanks: boolean;
    attachOn: AttachOn;
    stopRanks: StopRanks;
    /** A multi-node job's other nodes, over SSH (`rankdebug launch --hosts`). */
    hosts: string[];
    /** `ssh -F` for `hosts`; "" uses the user's own. */
    sshConfig: string;
    codeLens: boolean;
    terminalShim: boolean;
    offerDebugOnFailure: boolean;
    /** The server analyses documents at all. */
    enable: boolean;
    diagnostics: boolean;
    /** Where relative paths of commands resolve (`${workspaceFolder}`, `${fileDirname}`). */
    cwd: string;
    env: Record<string, string>;
    inheritEnv: boolean;
    /** First port of the per-rank debugpy attach configurations in launch.json. */
    debugpyBasePort: number;
    unknownValues: UnknownValues;
    showNotifications: ShowNotifications;
    maxDocumentBytes: number;
    /** Rank sessions a job's parent session opens at most; the other chosen ranks are debugged without one. */
    maxSessions: number;
}

export const DEFAULTS: ExtensionSettings = {
    python: '',
    host: '127.0.0.1',
    basePort: 0,
    waitForClient: true,
    collectiveTimeout: null,
    hangSeconds: 120,
    justMyCode: true,
    rememberRanks: true,
    attachOn: 'hit',
    stopRanks: 'together',
    hosts: [],
    sshConfig: '',
    codeLens: true,
    terminalShim: true,
    offerDebugOnFailure: true,
    enable: true,
    diagnostics: true,
    cwd: '${workspaceFolder}',
    env: {},
    inheritEnv: false,
    debugpyBasePort: 5678,
    unknownValues: 'hint',
    showNotifications: 'off',
    maxDocumentBytes: 16 * 1024 * 1024,
    maxSessions: 16,
};

type Valid = (value: unknown) => boolean;

const isBool: Valid = (v) => typeof v === 'boolean';
const isString: Valid = (v) => typeof v === 'string';
const isPort: Valid = (v) => typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= 65535;
const isPositiveInt: Valid = (v) => typeof v === 'number' && Number.isInteger(v) && v > 0;
const isSeconds: Valid = (v) => v === null || (typeof v === 'number' && v >= 0);
const oneOf =
    (...allowed: string[]): Valid =>
    (v) =>
        typeof v === 'string' && allowed.includes(v);
const isHostList: Valid = (v) => Array.isArray(v) && v.every((x) => typeof x === 'string' && /^[^\s,-][^\s,]*$/.test(x));
const isStringMap: Valid = (v) => typeof v === 'object' && v !== null && !Array.isArray(v) && Object.values(v).every((x) => typeof x === 'string');

/** What each setting accepts; anything else falls back to the default. */
const VALID: { [K in keyof ExtensionSettings]: Valid } = {
    python: isString,
    host: isString,
    basePort: isPort,
    waitForClient: isBool,
    collectiveTimeout: isSeconds,
    hangSeconds: (v) => typeof v === 'number' && Number.isFinite(v) && (v === 0 || v >= 1),
    justMyCode: isBool,
    rememberRanks: isBool,
    attachOn: oneOf('start', 'hit'),
    stopRanks: oneOf('together', 'alone'),
    hosts: isHostList,
    sshConfig: isString,
    codeLens: isBool,
    terminalShim: isBool,
    offerDebugOnFailure: isBool,
    enable: isBool,
    diagnostics: isBool,
    cwd: isString,
    env: isStringMap,
    inheritEnv: isBool,
    debugpyBasePort: isPort,
    unknownValues: oneOf('off', 'hint', 'info', 'warning'),
    showNotifications: oneOf('off', 'onError', 'onWarning', 'always'),
    maxDocumentBytes: isPositiveInt,
    maxSessions: isPositiveInt,
};

/** Reads settings through `get(key)`, falling back to the default for missing or ill-typed values. */
/** The `--hosts`/`--ssh-config` flags of `rankdebug jobs|stacks|attach` for these settings. */
export function hostFlags(s: Pick<ExtensionSettings, 'hosts' | 'sshConfig'>): string[] {
    if (s.hosts.length === 0) return [];
    return ['--hosts', s.hosts.join(','), ...(s.sshConfig ? ['--ssh-config', s.sshConfig] : [])];
}

export function readSettings(get: (key: keyof ExtensionSettings) => unknown): ExtensionSettings {
    const out: Record<string, unknown> = { ...DEFAULTS };
    for (const key of Object.keys(DEFAULTS) as (keyof ExtensionSettings)[]) {
        const value = get(key);
        if (value !== undefined && VALID[key](value)) out[key] = value;
    }
    return out as unknown as ExtensionSettings;
}

/**
 * The settings object the server understands (camelCase keys of the server's `_FIELDS`).
 * `interpreter` is the argv prefix that runs the rankdebug CLI (python + the bundled entry
 * script); `workspace` (a folder's URI) marks per-folder settings.
 */
export function toServerSettings(s: ExtensionSettings, interpreter: string[], workspace?: string): Record<string, unknown> {
    const out: Record<string, unknown> = {
        enable: s.enable,
        codeLens: s.codeLens,
        diagnostics: s.diagnostics,
        cwd: s.cwd,
        env: { ...s.env },
        inheritEnv: s.inheritEnv,
        interpreter,
        host: s.host || DEFAULTS.host,
        basePort: s.basePort,
        debugpyBasePort: s.debugpyBasePort,
        collectiveTimeout: s.collectiveTimeout,
        hangSeconds: s.hangSeconds,
        wait: s.waitForClient,
        attachOn: s.attachOn,
        stopRanks: s.stopRanks,
        hosts: [...s.hosts],
        sshConfig: s.sshConfig,
        unknownValues: s.unknownValues,
        showNotifications: s.showNotifications,
        maxDocumentBytes: s.maxDocumentBytes,
    };
    if (workspace) out.workspace = workspace;
    return out;
}
