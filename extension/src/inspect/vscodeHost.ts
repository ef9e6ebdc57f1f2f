/** The edge: the inspect room's host (host.ts) made of the real VS Code API. */
import * as vscode from 'vscode';
import { attachHost } from '../jobs/vscodeHost';
import type { EvalHost } from './host';

export const evalHost: EvalHost = {
    ...attachHost,
    outputChannel: (name) => vscode.window.createOutputChannel(name),
};
