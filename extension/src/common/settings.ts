/** The extension's settings for a resource, typed (see core/settings.ts). */
import * as vscode from 'vscode';
import { readSettings, type ExtensionSettings } from '../core/settings';

export const SECTION = 'rankdebug';

export function getSettings(scope?: vscode.ConfigurationScope): ExtensionSettings {
    const config = vscode.workspace.getConfiguration(SECTION, scope);
    return readSettings((key) => {
        const inspected = config.inspect(key);
        if (!inspected) return undefined;
        return (
            inspected.workspaceFolderValue ?? inspected.workspaceValue ?? inspected.globalValue ?? inspected.defaultValue
        );
    });
}

/** Whether a configuration change picks another interpreter: the server (and the shim) must restart. */
export function affectsInterpreter(e: vscode.ConfigurationChangeEvent): boolean {
    return e.affectsConfiguration(`${SECTION}.python`) || e.affectsConfiguration('python.defaultInterpreterPath');
}

/** Whether a configuration change touches settings the language server reads (core/settings.ts `toServerSettings`). */
export function affectsServer(e: vscode.ConfigurationChangeEvent): boolean {
    return e.affectsConfiguration(SECTION);
}

/** Whether a configuration change touches the terminal shim. */
export function affectsShim(e: vscode.ConfigurationChangeEvent): boolean {
    return e.affectsConfiguration(`${SECTION}.terminalShim`);
}
