/**
 * The VS Code calls the diagnose room makes, as interfaces its parts take from their caller:
 * vscodeHost.ts gives the real ones, the unit tests (tests/extension/unit/diagnose/) give fakes.
 * The parts behind them (classRoute.ts, whyStuckPage.ts, hangNotices.ts) import no `vscode`
 * value, so they run under mocha outside VS Code.
 */
import type * as vscode from 'vscode';
import type { StacksHost } from '../inspect/host';
import type { AttachHost, RoomHost } from '../jobs/host';
import type { StartedHost } from '../launch/host';

export type { NoticeHost } from './hangNotices';

/** What the sessions that stand for classes of ranks use (classRoute.ts). */
export interface ClassSessionsHost extends RoomHost, Pick<StartedHost, 'onDidStartDebugSession'> {
    /** A warning notification; not awaited. */
    showWarning(message: string): void;
}

/** What a Why Is This Job Stuck? panel uses (whyStuckPage.ts). */
export interface WhyStuckHost extends RoomHost, Pick<AttachHost, 'runCli' | 'withProgress'>, Pick<StacksHost, 'showWarning' | 'showFile'> {
    /** A webview panel titled `title` in the active column, scripts on, no local resources, a find widget. */
    createPanel(title: string): Pick<vscode.WebviewPanel, 'webview' | 'onDidDispose' | 'reveal' | 'dispose'>;
}
