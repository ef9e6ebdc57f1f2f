// End-to-end scenario `launchjson` (run.mjs runs it; RANKDEBUG_E2E_ONLY=launchjson alone):
//   Generate launch.json: the rankdebug and debugpy configurations are written.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parse as parseJsonc } from 'jsonc-parser';
import { ROOT, say, shot, palette, showFile, goToLine } from '../helpers.mjs';

export async function scenarioLaunchJson(page, ws, cmdLine) {
    say('Generate launch.json from the command in train.sh');
    await showFile(page, 'train.sh');
    await page.locator('.tab.active', { hasText: 'train.sh' }).waitFor();
    await goToLine(page, cmdLine);
    await palette(page, 'Rank Debugger: Generate launch.json for Training Command');
    await page.locator('.quick-input-list .monaco-list-row', { hasText: 'rank 1 · node 0 · local 1' }).waitFor({ timeout: 30000 });
    await page.keyboard.press('Enter');
    await page.locator('.tab.active', { hasText: 'launch.json' }).waitFor({ timeout: 30000 });
    await page.locator('.monaco-editor .view-line', { hasText: '"type": "rankdebug"' }).first().waitFor({ timeout: 15000 });
    await shot(page, '09-launch-json');
    const doc = parseJsonc(fs.readFileSync(path.join(ws, '.vscode', 'launch.json'), 'utf8'));
    const types = new Set((doc.configurations ?? []).map((c) => `${c.type}/${c.request}`));
    for (const t of ['rankdebug/launch', 'rankdebug/attach', 'debugpy/attach']) if (!types.has(t)) throw new Error(`launch.json lacks a ${t} configuration`);
    if (!(doc.compounds ?? []).length) throw new Error('launch.json has no compound');
    // Our configurations use only the properties our schema declares (VS Code flags others);
    // the debugpy ones are validated by the Python extension, which is not installed here.
    const manifest = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
    const attrs = manifest.contributes.debuggers[0].configurationAttributes;
    const common = new Set(['type', 'request', 'name', 'preLaunchTask', 'postDebugTask', 'presentation', 'internalConsoleOptions', 'suppressMultipleSessionWarning', 'debugServer']);
    for (const c of doc.configurations.filter((x) => x.type === 'rankdebug')) {
        const extra = Object.keys(c).filter((k) => !common.has(k) && !(k in attrs[c.request].properties));
        if (extra.length) throw new Error(`launch.json: ${c.name} has properties the schema does not declare: ${extra.join(', ')}`);
    }
    say('launch.json holds rankdebug and debugpy configurations');
}
