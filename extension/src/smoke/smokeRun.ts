/**
 * Smoke Run (code lens, editor context menu, command palette): the training command under
 * the cursor shrunk to a run of seconds by `rankdebug smoke`, shown as a diff (the command as
 * written on the left, the smoke command on the right, config copies beside), editable, and
 * run in a terminal or debugged with the usual quick-pick of ranks. The user's files are
 * never edited: the smoke script lives in the extension's own storage.
 * The steps: smokeFlow.ts, with the VS Code host (vscodeHost.ts).
 */
import type * as vscode from 'vscode';
import type { Context } from '../launch/commands';
import { SmokeFlow } from './smokeFlow';
import { smokeHost } from './vscodeHost';

export { SMOKE_SUFFIX } from './smokeFlow';

/** The smoke scripts' folder and the read-only left sides of their diffs. */
export class SmokeRuns extends SmokeFlow {
    constructor(storage: vscode.Uri, ctx: Context) {
        super(smokeHost, storage, ctx);
    }
}
