/** Evaluate in Rank… (evalInRank.ts), with the VS Code host (vscodeHost.ts). */
import type * as vscode from 'vscode';
import { EvalInRank } from './evalInRank';
import { evalHost } from './vscodeHost';

export class RankEval extends EvalInRank {
    constructor(memento: vscode.Memento, python: () => Promise<string>) {
        super(evalHost, memento, python);
    }
}
