// End-to-end scenario `codelens` (run.mjs runs it; RANKDEBUG_E2E_ONLY=codelens alone):
//   the code lens: ▶ Debug runs the command with the remembered ranks.
import { say, jobProcesses, waitFor, shot, showFile, stopDebugging, frameRow } from '../helpers.mjs';

export async function scenarioCodeLens(page, ws, bpLine) {
    say('code lens ▶ Debug: the remembered ranks (1), no question asked');
    await showFile(page, 'train.sh');
    const lens = page.locator('.monaco-editor .codelens-decoration a', { hasText: 'Debug · 2 ranks' }).first();
    await lens.waitFor({ timeout: 30000 });
    const t0 = Date.now();
    await lens.click();
    await page.locator('.debug-call-stack .monaco-list-row', { hasText: 'rank 1' }).first().waitFor({ timeout: 120000 });
    await frameRow(page, 'train.py', bpLine).first().waitFor({ timeout: 60000 });
    say(`rank 1 paused ${Date.now() - t0} ms after the lens click`);
    await shot(page, '10-code-lens');
    await stopDebugging(page);
    const left = await waitFor('the job to end', () => (jobProcesses(ws).length ? false : []), 20000).catch(() => jobProcesses(ws));
    if (left.length) throw new Error(`processes left: ${left.join('; ')}`);
}
