/**
 * Smoke Run (code lens, editor context menu, command palette): the training command under
 * the cursor shrunk to a run of seconds by `rankdebug smoke`, shown as a diff (the command as
 * written on the left, the smoke command on the right, config copies beside), editable, and
 * run in a terminal or debugged with the usual quick-pick of ranks. The user's files are
 * never edited: the smoke script lives in the extension's own storage.
 */
import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { debugCommand, planArg, saveIfDirty, sourceFromArgs, type Context } from '../launch/commands';
import { isPlanError, type PlanError } from '../core/ranks';
import { quote } from '../core/shell';
import { commandLine, originalScript, parseSmoke, smokeScript, type SmokeOrigin } from '../core/smokeScript';
import { planErrorText } from '../debug/launchResolver';
import { log } from '../common/log';

const ORIGINAL_SCHEME = 'rankdebug-original';
export const SMOKE_SUFFIX = '.smoke.sh';

/** The smoke scripts' folder and the read-only left sides of their diffs. */
export class SmokeRuns implements vscode.Disposable {
    private readonly originals = new Map<string, string>();
    private readonly changed = new vscode.EventEmitter<vscode.Uri>();
    private readonly registration: vscode.Disposable;

    constructor(
        private readonly storage: vscode.Uri,
        private readonly ctx: Context,
    ) {
        this.registration = vscode.workspace.registerTextDocumentContentProvider(ORIGINAL_SCHEME, {
            onDidChange: this.changed.event,
            provideTextDocumentContent: (uri) => this.originals.get(uri.path) ?? '',
        });
    }

    dispose(): void {
        this.registration.dispose();
        this.changed.dispose();
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
        const src = await sourceFromArgs(args);
        if (!src) return;
        await saveIfDirty(src);
        const t0 = Date.now();
        const result = await this.ctx.server.execute<Record<string, unknown> | PlanError>('rankdebug.smoke', planArg(src));
        if (isPlanError(result)) {
            void vscode.window.showErrorMessage(vscode.l10n.t('Rank Debugger: {0}', planErrorText(result, vscode.l10n)));
            return;
        }
        const answer = parseSmoke(result);
        const line = src.line ?? 0;
        const origin: SmokeOrigin = {
            label: src.uri ? `${vscode.workspace.asRelativePath(src.uri)}:${line + 1}` : vscode.l10n.t('the typed command'),
            cwd: answer.cwd,
        };
        log().info(`smoke ${origin.label}: ${answer.changes.length} changes in ${Date.now() - t0} ms`);
        const stem = src.uri ? `${path.basename(src.uri.path).replace(/\.[^.]*$/, '')}-L${line + 1}` : 'typed-command';
        const dir = await this.folder();
        const right = vscode.Uri.file(path.join(dir, `${stem}${SMOKE_SUFFIX}`));
        await fs.writeFile(right.fsPath, smokeScript(answer, origin), { mode: 0o600 });
        const left = vscode.Uri.from({ scheme: ORIGINAL_SCHEME, path: `/${stem}.sh` });
        this.originals.set(left.path, originalScript(answer, origin));
        this.changed.fire(left);
        // A document already open keeps its text until told otherwise: reload the new script.
        const open = vscode.workspace.textDocuments.find((d) => d.uri.toString() === right.toString());
        if (open?.isDirty === false) await vscode.commands.executeCommand('workbench.action.files.revert', right);
        for (const copy of answer.copies) {
            await vscode.commands.executeCommand('vscode.diff', vscode.Uri.file(copy.from), vscode.Uri.file(copy.to), vscode.l10n.t('{0} ↔ smoke copy', path.basename(copy.from)), { preview: false });
        }
        await vscode.commands.executeCommand('vscode.diff', left, right, vscode.l10n.t('Smoke run: {0}', origin.label), { preview: false });
        const summary = answer.changes.length
            ? vscode.l10n.t('Smoke run of {0}: {1} changes (see the diff).', origin.label, String(answer.changes.length))
            : vscode.l10n.t('Smoke run of {0}: nothing to shrink was found.', origin.label);
        const runLabel = vscode.l10n.t('Run');
        const debugLabel = vscode.l10n.t('Debug');
        const picked = await vscode.window.showInformationMessage([summary, ...answer.notes].join(' '), runLabel, debugLabel);
        if (picked === runLabel) await this.run(right);
        else if (picked === debugLabel) await this.debug(right);
    }

    /** Run in a terminal: the script as it is now in the editor (saved first). */
    async run(arg?: unknown): Promise<void> {
        const uri = await this.smokeUri(arg);
        if (!uri) return;
        const terminal = vscode.window.createTerminal({ name: vscode.l10n.t('Smoke: {0}', path.basename(uri.fsPath, SMOKE_SUFFIX)) });
        terminal.show();
        terminal.sendText(`bash ${quote(uri.fsPath)}`);
    }

    /** Debug: the quick-pick of ranks for the script's command, as for any other command. */
    async debug(arg?: unknown): Promise<boolean> {
        const uri = await this.smokeUri(arg);
        if (!uri) return false;
        const doc = await vscode.workspace.openTextDocument(uri);
        const line = commandLine(doc.getText());
        if (line === undefined) {
            void vscode.window.showWarningMessage(vscode.l10n.t('Rank Debugger: the smoke script has no command left.'));
            return false;
        }
        return debugCommand(this.ctx, [uri.toString(), line], { alwaysPick: true });
    }

    /** The smoke script an editor-title action or the notification means, saved. */
    private async smokeUri(arg: unknown): Promise<vscode.Uri | undefined> {
        const uri = arg instanceof vscode.Uri ? arg : vscode.window.activeTextEditor?.document.uri;
        if (!uri?.fsPath.endsWith(SMOKE_SUFFIX)) {
            void vscode.window.showWarningMessage(vscode.l10n.t('Rank Debugger: open a smoke script first (Smoke Run on a training command).'));
            return undefined;
        }
        const doc = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString());
        if (doc?.isDirty) await doc.save();
        return uri;
    }
}
