/** The edge: the launch room's host (host.ts) made of the real VS Code API and the extension's settings. */
import * as vscode from 'vscode';
import { getSettings } from '../common/settings';
import type { RankPickHost } from './host';

export const pickHost: RankPickHost = {
    l10n: vscode.l10n,
    createQuickPick: <T extends vscode.QuickPickItem>() => vscode.window.createQuickPick<T>(),
    separator: vscode.QuickPickItemKind.Separator,
    rememberRanks: () => getSettings().rememberRanks,
};
