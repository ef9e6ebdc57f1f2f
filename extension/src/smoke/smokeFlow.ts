/**
 * Smoke Run's steps (smokeRun.ts binds them to VS Code): the command's smoke run asked of the
 * language server, the smoke script written (0600, in a 0700 folder of the extension's own
 * storage) with the command as written as the read-only left side of its diff, the diffs
 * opened, Run and Debug offered; Run (a terminal) and Debug (the quick-pick of ranks) on a
 * smoke script, any other file refused. The VS Code calls are the host's (host.ts).
 */
import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import type * as vscode from 'vscode';
import { isPlanError, type PlanError } from '../core/ranks';
import { quote } from '../core/shell';
import { commandLine, originalScript, parseSmoke, smokeScript, type SmokeOrigin } from '../core/smokeScript';
import { planErrorText } from '../debug/launchResolver';
import { planArg, type Context } from '../launch/trainingCommand';
import type { ContentRegistration, SmokeHost } from './host';

export const ORIGINAL_SCHEME = 'rankdebug-original';
export const SMOKE_SUFFIX = '.smoke.sh';

/** The smoke scripts' folder and the read-only left sides of their diffs. */
export class SmokeFlow implements vscode.Disposable {
    private readonly originals = new Map<string, string>();
    private readonly registration: ContentRegistration;

    constructor(
        private readonly host: SmokeHost,
        private readonly storage: vscode.Uri,
        private readonly ctx: Context,
    ) {
        this.registration = host.registerContent(ORIGINAL_SCHEME, (p) => this.originals.get(p) ?? '');
    }

    dispose(): void {
        this.registration.dispose();
    }

    /** Private to the user: the smoke scripts may name data paths and hosts. */
    private async folder(): Promise<string> {
        const dir = path.join(this.storage.fsPath, 'smoke');
        await fs.mkdir(dir, { recursive: true, mode: 0o700 });
        await fs.chmod(dir, 0o700);
        return dir;
    }

    /**
     * Smoke Run.
     * Steps: find the command (lens, menu, cursor or typed text) and save its document; the
     * language server's `rankdebug.smoke` (`rankdebug smoke --json`'s answer, in the folder the
     * command runs in); write the smoke script and the left side; open the diff (and one per
     * config copy); offer Run and Debug.
     */
    async open(args: unknown[]): Promise<void> {
        const { host } = this;
        const src = await host.sourceFromArgs(args);
        if (!src) return;
        await host.saveIfDirty(src);
        const t0 = Date.now();
        const result = await this.ctx.server.execute<Record<string, unknown> | PlanError>('rankdebug.smoke', planArg(src));
        if (isPlanError(result)) {
            host.showError(host.l10n.t('Rank Debugger: {0}', planErrorText(result, host.l10n)));
            return;
        }
        const answer = parseSmoke(result);
        const line = src.line ?? 0;
        const origin: SmokeOrigin = {
            label: src.uri ? `${host.asRelativePath(src.uri)}:${line + 1}` : host.l10n.t('the typed command'),
            cwd: answer.cwd,
        };
        host.log.info(`smoke ${origin.label}: ${answer.changes.length} changes in ${Date.now() - t0} ms`);
        const stem = src.uri ? `${path.basename(src.uri.path).replace(/\.[^.]*$/, '')}-L${line + 1}` : 'typed-command';
        const dir = await this.folder();
        const right = host.fileUri(path.join(dir, `${stem}${SMOKE_SUFFIX}`));
        await fs.writeFile(right.fsPath, smokeScript(answer, origin), { mode: 0o600 });
        const left = host.schemeUri(ORIGINAL_SCHEME, `/${stem}.sh`);
        this.originals.set(left.path, originalScript(answer, origin));
        this.registration.changed(left);
        // A document already open keeps its text until told otherwise: reload the new script.
        const open = host.openDocument(right);
        if (open?.isDirty === false) await host.executeCommand('workbench.action.files.revert', right);
        for (const copy of answer.copies) {
            await host.executeCommand('vscode.diff', host.fileUri(copy.from), host.fileUri(copy.to), host.l10n.t('{0} ↔ smoke copy', path.basename(copy.from)), { preview: false });
        }
        await host.executeCommand('vscode.diff', left, right, host.l10n.t('Smoke run: {0}', origin.label), { preview: false });
        const summary = answer.changes.length
            ? host.l10n.t('Smoke run of {0}: {1} changes (see the diff).', origin.label, String(answer.changes.length))
            : host.l10n.t('Smoke run of {0}: nothing to shrink was found.', origin.label);
        const runLabel = host.l10n.t('Run');
        const debugLabel = host.l10n.t('Debug');
        const picked = await host.ask([summary, ...answer.notes].join(' '), runLabel, debugLabel);
        if (picked === runLabel) await this.run(right);
        else if (picked === debugLabel) await this.debug(right);
    }

    /** Run in a terminal: the script as it is now in the editor (saved first). */
    async run(arg?: unknown): Promise<void> {
        const uri = await this.smokeUri(arg);
        if (!uri) return;
        const terminal = this.host.createTerminal(this.host.l10n.t('Smoke: {0}', path.basename(uri.fsPath, SMOKE_SUFFIX)));
        terminal.show();
        terminal.sendText(`bash ${quote(uri.fsPath)}`);
    }

    /** Debug: the quick-pick of ranks for the script's command, as for any other command. */
    async debug(arg?: unknown): Promise<boolean> {
        const uri = await this.smokeUri(arg);
        if (!uri) return false;
        const doc = await this.host.readDocument(uri);
        const line = commandLine(doc.getText());
        if (line === undefined) {
            this.host.showWarning(this.host.l10n.t('Rank Debugger: the smoke script has no command left.'));
            return false;
        }
        return this.host.debugCommand(this.ctx, [uri.toString(), line], { alwaysPick: true });
    }

    /** The smoke script an editor-title action or the notification means, saved. */
    private async smokeUri(arg: unknown): Promise<vscode.Uri | undefined> {
        const uri = this.host.isUri(arg) ? arg : this.host.activeUri();
        if (!uri?.fsPath.endsWith(SMOKE_SUFFIX)) {
            this.host.showWarning(this.host.l10n.t('Rank Debugger: open a smoke script first (Smoke Run on a training command).'));
            return undefined;
        }
        const doc = this.host.openDocument(uri);
        if (doc?.isDirty) await doc.save();
        return uri;
    }
}
