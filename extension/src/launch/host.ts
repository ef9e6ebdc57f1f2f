/**
 * The few VS Code calls the launch room's picks make, as an interface they take from their
 * caller: vscodeHost.ts gives the real ones, the unit tests (tests/extension/unit/launch/) give
 * fakes. The picks import no `vscode` value, so they run under mocha outside VS Code.
 */
import type * as vscode from 'vscode';
import type { Localize } from '../core/localize';

/** What a quick-pick over ranks uses (the launch picks, and Attach to which ranks?). */
export interface PickHost {
    readonly l10n: Localize;
    createQuickPick<T extends vscode.QuickPickItem>(): vscode.QuickPick<T>;
    /** `vscode.QuickPickItemKind.Separator`, an enum value a pick cannot import. */
    readonly separator: vscode.QuickPickItemKind;
}

/** What the rank choice uses besides the picks. */
export interface RankPickHost extends PickHost {
    /** The `rankdebug.rememberRanks` setting. */
    rememberRanks(): boolean;
}
