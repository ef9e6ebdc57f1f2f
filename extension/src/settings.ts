/** The extension's settings for a resource, typed (see core/settings.ts). */
import * as vscode from 'vscode';
import { readSettings, type ExtensionSettings } from './core/settings';

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

/** Whether a configuration change touches settings the language server or interpreter depend on. */
export function affectsServer(e: vscode.ConfigurationChangeEvent): boolean {
    const keys = ['python', 'host', 'basePort', 'waitForClient', 'collectiveTimeout', 'attachOn', 'codeLens', 'terminalShim'];
    return keys.some((k) => e.affectsConfiguration(`${SECTION}.${k}`)) || e.affectsConfiguration('python.defaultInterpreterPath');
}
