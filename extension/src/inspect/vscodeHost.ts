/** The edge: the inspect room's host (host.ts) made of the real VS Code API. */
import * as vscode from 'vscode';
import { attachHost, roomHost } from '../jobs/vscodeHost';
import type { CompareHost, EvalHost, StacksHost } from './host';

export const evalHost: EvalHost = {
    ...attachHost,
    outputChannel: (name) => vscode.window.createOutputChannel(name),
};

const STACKS_VIEW = 'rankdebug.stacks';

export const stacksHost: StacksHost = {
    ...roomHost,
    runCli: attachHost.runCli,
    showWarning: (message) => void vscode.window.showWarningMessage(message),
    withWindowProgress: (title, task) => vscode.window.withProgress({ location: vscode.ProgressLocation.Window, title }, task),
    createPanel: (title) =>
        vscode.window.createWebviewPanel(STACKS_VIEW, title, vscode.ViewColumn.Active, {
            enableScripts: true,
            localResourceRoots: [],
            enableFindWidget: true,
        }),
    showFile: (file, line) =>
        vscode.window.showTextDocument(vscode.Uri.file(file), {
            selection: new vscode.Range(line, 0, line, 0),
            viewColumn: vscode.ViewColumn.Beside,
            preview: true,
        }),
};

const COMPARE_VIEW = 'rankdebug.compare';

export const compareHost: CompareHost = {
    ...roomHost,
    runCli: attachHost.runCli,
    showWarning: stacksHost.showWarning,
    createComparePanel: (title, column) =>
        vscode.window.createWebviewPanel(COMPARE_VIEW, title, { viewColumn: column, preserveFocus: false }, {
            enableScripts: true,
            localResourceRoots: [],
            enableFindWidget: true,
        }),
};
