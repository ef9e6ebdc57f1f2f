/**
 * The language client: starts `rankdebug server` (stdio) with the chosen interpreter, sends
 * settings as `{settings, globalSettings}` (the python-tools template flow) in
 * `initializationOptions`, in `workspace/didChangeConfiguration` when they change, and as the
 * answer to the server's `workspace/configuration` (all three through `settingsPayload`, that is
 * core/settings.ts `toServerSettings`); restarts, debounced, on interpreter changes and on request.
 */
import * as vscode from 'vscode';
import {
    DidChangeConfigurationNotification,
    LanguageClient,
    RevealOutputChannelOn,
    type ConfigurationParams,
    type ConfigurationRequest,
    type LanguageClientOptions,
    type ServerOptions,
} from 'vscode-languageclient/node';
import { toServerSettings } from '../core/settings';
import { log } from './log';
import { checkInterpreter, cliPrefix, resolveInterpreter, type Interpreter } from './python';
import { SECTION, getSettings } from './settings';

export const LANGUAGES = ['shellscript', 'markdown'];

export class Server implements vscode.Disposable {
    private client: LanguageClient | undefined;
    private starting: Promise<LanguageClient | undefined> | undefined;
    private restartTimer: NodeJS.Timeout | undefined;
    private interpreter: Interpreter | undefined;
    private warned = false;

    /** The interpreter the server (and the jobs it launches) use. */
    async python(): Promise<Interpreter> {
        this.interpreter ??= await resolveInterpreter();
        return this.interpreter;
    }

    /** The server's settings object for every workspace folder, plus the global one. */
    async settingsPayload(): Promise<{ settings: Record<string, unknown>[]; globalSettings: Record<string, unknown> }> {
        const { python } = await this.python();
        const prefix = cliPrefix(python);
        const folders = vscode.workspace.workspaceFolders ?? [];
        return {
            settings: folders.map((f) => toServerSettings(getSettings(f.uri), prefix, f.uri.toString())),
            globalSettings: toServerSettings(getSettings(), prefix),
        };
    }

    /** Tells a running server the settings changed (`workspace/didChangeConfiguration`). */
    async sendSettings(): Promise<void> {
        const client = this.client;
        if (!client?.isRunning()) return;
        try {
            const settings = await this.settingsPayload();
            await client.sendNotification(DidChangeConfigurationNotification.type, { settings });
        } catch (e) {
            log().warn(`sending settings to the server: ${String(e)}`);
        }
    }

    /**
     * The answer to `workspace/configuration` for the `rankdebug` section: the same objects as
     * the payload (the server's keys, not the raw section); other sections as VS Code has them.
     */
    private readonly configuration: ConfigurationRequest.MiddlewareSignature = async (params: ConfigurationParams, token, next) => {
        if (!params.items.every((i) => i.section === SECTION)) return next(params, token);
        const prefix = cliPrefix((await this.python()).python);
        return params.items.map((i) => toServerSettings(getSettings(i.scopeUri ? vscode.Uri.parse(i.scopeUri) : undefined), prefix));
    };

    /** The running client, started on first use. */
    async ready(): Promise<LanguageClient | undefined> {
        if (this.client?.isRunning()) return this.client;
        this.starting ??= this.start().finally(() => (this.starting = undefined));
        return this.starting;
    }

    private async start(): Promise<LanguageClient | undefined> {
        const t0 = Date.now();
        this.interpreter = await resolveInterpreter();
        const { python, source } = this.interpreter;
        const check = await checkInterpreter(python);
        if (!check.ok) {
            log().error(`interpreter ${python} (${source}): ${check.problem ?? 'unusable'}`);
            void this.reportBadInterpreter(python, check.problem ?? '');
            return undefined;
        }
        log().info(`interpreter ${python} (${source}), Python ${check.version}, rankdebug ${check.rankdebug}`);
        const [cmd, ...args] = cliPrefix(python);
        const serverOptions: ServerOptions = {
            command: cmd,
            args: [...args, 'server'],
            // Bytecode is cached, as for the CLI (cli.ts): the next start imports it compiled.
            // The C allocator (lsp/memory.py system_allocator), set here so that the server
            // need not start itself again; a user's own PYTHONMALLOC is kept.
            options: { env: { ...process.env, PYTHONUTF8: '1', ...(process.env.PYTHONMALLOC ? {} : { PYTHONMALLOC: 'malloc', RANKDEBUG_SERVER_ALLOCATOR: '1' }) } },
        };
        const clientOptions: LanguageClientOptions = {
            documentSelector: LANGUAGES.flatMap((language) => [
                { scheme: 'file', language },
                { scheme: 'untitled', language },
            ]),
            outputChannel: log(),
            revealOutputChannelOn: RevealOutputChannelOn.Never,
            initializationOptions: await this.settingsPayload(),
            middleware: { workspace: { configuration: this.configuration } },
        };
        const client = new LanguageClient('rankdebug', 'Rank Debugger', serverOptions, clientOptions);
        await client.start();
        this.client = client;
        log().info(`language server started in ${Date.now() - t0} ms`);
        return client;
    }

    private async reportBadInterpreter(python: string, problem: string): Promise<void> {
        if (this.warned) return;
        this.warned = true;
        const select = vscode.l10n.t('Select Interpreter');
        const settings = vscode.l10n.t('Open Settings');
        const choice = await vscode.window.showErrorMessage(
            vscode.l10n.t('Rank Debugger cannot use the Python interpreter {0}: {1}', python, problem),
            select,
            settings,
        );
        if (choice === select && vscode.extensions.getExtension('ms-python.python')) {
            await vscode.commands.executeCommand('python.setInterpreter');
        } else if (choice) {
            await vscode.commands.executeCommand('workbench.action.openSettings', 'rankdebug.python');
        }
    }

    /** Restarts soon; repeated calls within 500 ms restart once. */
    scheduleRestart(): void {
        if (this.restartTimer) clearTimeout(this.restartTimer);
        this.restartTimer = setTimeout(() => void this.restart(), 500);
    }

    async restart(): Promise<void> {
        this.interpreter = undefined;
        this.warned = false;
        const old = this.client;
        this.client = undefined;
        if (old) await old.stop().catch((e: unknown) => log().warn(`stopping the server: ${String(e)}`));
        await this.ready();
    }

    /** `workspace/executeCommand` on the server; throws when the server cannot start. */
    async execute<T>(command: string, arg: unknown): Promise<T> {
        const client = await this.ready();
        if (!client) throw new Error(vscode.l10n.t('The Rank Debugger language server is not running; see the Rank Debugger output.'));
        return client.sendRequest<T>('workspace/executeCommand', { command, arguments: [arg] });
    }

    dispose(): void {
        if (this.restartTimer) clearTimeout(this.restartTimer);
        void this.client?.stop();
    }
}
