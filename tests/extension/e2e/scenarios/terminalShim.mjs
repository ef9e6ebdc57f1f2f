// End-to-end scenario `shim` (run.mjs runs it; RANKDEBUG_E2E_ONLY=shim alone):
//   the terminal `rankdebug` command: `rankdebug torchrun …` typed in a terminal attaches rank 1;
//   stop ends the job.
import * as path from 'node:path';
import { PYTHON, say, jobProcesses, waitFor, shot, stopDebugging, frameRow, terminal } from '../helpers.mjs';

export async function scenarioTerminalShim(page, ws, bpLine) {
    say('terminal: rankdebug --ranks 1 torchrun ... (the shim on PATH)');
    await terminal(page);
    await page.keyboard.type(`export PATH="$PATH:${path.dirname(PYTHON)}"; cd ${ws}`);
    await page.keyboard.press('Enter');
    await page.keyboard.type('rankdebug --ranks 1 torchrun --nproc_per_node 2 train.py --steps 5');
    await page.keyboard.press('Enter');
    await page.locator('.debug-call-stack .monaco-list-row', { hasText: 'rank 1' }).first().waitFor({ timeout: 120000 });
    await frameRow(page, 'train.py', bpLine).first().waitFor({ timeout: 60000 });
    say('rank 1 of the terminal job paused at the breakpoint');
    await shot(page, '07-terminal-shim');
    await stopDebugging(page);
    const left = await waitFor('the terminal job to end', () => (jobProcesses(ws).length ? false : []), 20000).catch(() => jobProcesses(ws));
    if (left.length) throw new Error(`processes left after stopping the terminal job: ${left.join('; ')}`);
    say('stopped the terminal job; no process left');
}
