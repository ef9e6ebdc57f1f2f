/**
 * Which Python runs the rankdebug CLI and language server.
 * Order: the `rankdebug.python` setting; the Python extension's active interpreter when that
 * extension is installed (@vscode/python-extension); else `python3`.
 * The CLI itself comes with the extension (dist/bundled/libs, put first on sys.path by
 * extension/python/rankdebug_main.py), so the interpreter needs nothing installed.
 */
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { log } from './log';
import { getSettings } from './settings';

export interface Interpreter {
    python: string;
    source: 'setting' | 'python extension' | 'default';
}

export interface CheckResult {
    ok: boolean;
    version?: string;
    rankdebug?: string;
    problem?: string;
}

let extensionRoot = '';

export function setExtensionRoot(root: string): void {
    extensionRoot = root;
}

/** The script that runs the bundled rankdebug CLI: `python MAIN VERB ...`. */
export function mainScript(): string {
    return path.join(extensionRoot, 'extension', 'python', 'rankdebug_main.py');
}

/** The argv prefix that runs `rankdebug`: [python, MAIN]. */
export function cliPrefix(python: string): string[] {
    return [python, mainScript()];
}

function expand(p: string, folder?: vscode.WorkspaceFolder): string {
    let out = p.replace(/\$\{workspaceFolder\}/g, folder?.uri.fsPath ?? vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? '');
    out = out.replace(/\$\{userHome\}/g, process.env.HOME ?? '~');
    if (out.startsWith('~/')) out = path.join(process.env.HOME ?? '', out.slice(2));
    return out;
}

async function fromPythonExtension(resource?: vscode.Uri): Promise<string | undefined> {
    if (!vscode.extensions.getExtension('ms-python.python')) return undefined;
    try {
        const { PythonExtension } = await import('@vscode/python-extension');
        const api = await PythonExtension.api();
        const active = api.environments.getActiveEnvironmentPath(resource);
        const env = await api.environments.resolveEnvironment(active);
        return env?.executable.uri?.fsPath;
    } catch (e) {
        log().warn(`Python extension API: ${String(e)}`);
        return undefined;
    }
}

/** Resolves the interpreter for a resource (see the module comment for the order). */
export async function resolveInterpreter(resource?: vscode.Uri): Promise<Interpreter> {
    const folder = resource ? vscode.workspace.getWorkspaceFolder(resource) : vscode.workspace.workspaceFolders?.[0];
    const configured = getSettings(folder?.uri).python.trim();
    if (configured) return { python: expand(configured, folder), source: 'setting' };
    const fromExt = await fromPythonExtension(resource ?? folder?.uri);
    if (fromExt) return { python: fromExt, source: 'python extension' };
    return { python: 'python3', source: 'default' };
}

/** Subscribes to interpreter changes in the Python extension, when it is installed. */
export async function onInterpreterChange(listener: () => void): Promise<vscode.Disposable | undefined> {
    if (!vscode.extensions.getExtension('ms-python.python')) return undefined;
    try {
        const { PythonExtension } = await import('@vscode/python-extension');
        const api = await PythonExtension.api();
        return api.environments.onDidChangeActiveEnvironmentPath(() => listener());
    } catch {
        return undefined;
    }
}

/** Runs `python MAIN --check`: the Python version and whether the rankdebug package loads. */
export function checkInterpreter(python: string): Promise<CheckResult> {
    return new Promise((resolve) => {
        if (path.isAbsolute(python) && !fs.existsSync(python)) {
            resolve({ ok: false, problem: vscode.l10n.t('{0} does not exist', python) });
            return;
        }
        execFile(python, [mainScript(), '--check'], { timeout: 20000, encoding: 'utf8' }, (err, stdout, stderr) => {
            if (err && !stdout) {
                const missing = (err as NodeJS.ErrnoException).code === 'ENOENT';
                resolve({
                    ok: false,
                    problem: missing ? vscode.l10n.t('{0} was not found', python) : (stderr || String(err)).trim().split('\n').slice(-3).join(' '),
                });
                return;
            }
            try {
                const info = JSON.parse(stdout.trim().split('\n').pop() ?? '{}') as CheckResult;
                resolve(info);
            } catch {
                resolve({ ok: false, problem: stdout.trim() || stderr.trim() });
            }
        });
    });
}
