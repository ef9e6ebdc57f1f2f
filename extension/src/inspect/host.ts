/**
 * The VS Code calls the inspect room makes, as interfaces its parts take from their caller:
 * vscodeHost.ts gives the real ones, the unit tests (tests/extension/unit/inspect/) give fakes.
 * The parts behind them import no `vscode` value, so they run under mocha outside VS Code.
 */
import type * as vscode from 'vscode';
import type { AttachHost, RoomHost } from '../jobs/host';
import type { PickHost } from '../launch/host';

/** What Evaluate in Rank… uses. */
export interface EvalHost extends RoomHost, PickHost, Pick<AttachHost, 'runCli' | 'withProgress'> {
    /** An output channel named `name` (the caller keeps it). */
    outputChannel(name: string): Pick<vscode.OutputChannel, 'appendLine' | 'show' | 'dispose'>;
}
