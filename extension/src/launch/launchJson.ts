/** Writes configurations into `.vscode/launch.json`, merged and with comments kept (core/launchJson.ts). */
import * as vscode from 'vscode';
import { mergeLaunchJson, type Named } from '../core/launchJson';
import { join } from '../core/shell';

/**
 * Merges into the folder's launch.json and opens it.
 * Steps: read the file (an open, unsaved editor's text wins); merge; write through a
 * WorkspaceEdit so undo works when the file is open; save; show.
 */
export async function writeLaunchJson(folder: vscode.WorkspaceFolder, configurations: readonly Named[], compounds: readonly Named[], terminalCommand?: readonly string[]): Promise<void> {
    const uri = vscode.Uri.joinPath(folder.uri, '.vscode', 'launch.json');
    let text: string | undefined;
    const open = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString());
    if (open) text = open.getText();
    else {
        try {
            text = new TextDecoder().decode(await vscode.workspace.fs.readFile(uri));
        } catch {
            text = undefined;
        }
    }
    let merged;
    try {
        merged = mergeLaunchJson(text, configurations, compounds);
    } catch (e) {
        void vscode.window.showErrorMessage(vscode.l10n.t('Rank Debugger: cannot update {0}: {1}', uri.fsPath, e instanceof Error ? e.message : String(e)));
        return;
    }
    if (open) {
        const edit = new vscode.WorkspaceEdit();
        edit.replace(uri, new vscode.Range(open.positionAt(0), open.positionAt(open.getText().length)), merged.text);
        await vscode.workspace.applyEdit(edit);
        await open.save();
    } else {
        await vscode.workspace.fs.createDirectory(vscode.Uri.joinPath(folder.uri, '.vscode'));
        await vscode.workspace.fs.writeFile(uri, new TextEncoder().encode(merged.text));
    }
    await vscode.window.showTextDocument(uri, { preview: false });
    const copy = vscode.l10n.t('Copy Terminal Command');
    const choice = await vscode.window.showInformationMessage(
        vscode.l10n.t('launch.json: {0} added, {1} replaced. The attach configurations find ranks started by the terminal command.', merged.added.length, merged.replaced.length),
        ...(terminalCommand?.length ? [copy] : []),
    );
    if (choice === copy && terminalCommand) await vscode.env.clipboard.writeText(join(terminalCommand));
}
