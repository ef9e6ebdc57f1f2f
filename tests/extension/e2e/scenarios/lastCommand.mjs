// End-to-end scenario `last` (run.mjs runs it; RANKDEBUG_E2E_ONLY=last alone):
//   the failed-command offer: a training command that failed in the terminal is offered for
//   debugging.
import * as path from 'node:path';
import { PYTHON, say, shot, terminal } from '../helpers.mjs';

export async function scenarioLastCommand(page) {
    say('terminal: a training command that fails → offer to debug it');
    await terminal(page);
    await page.keyboard.type(`export PATH="$PATH:${path.dirname(PYTHON)}"`);
    await page.keyboard.press('Enter');
    await page.keyboard.type('torchrun --nproc_per_node 2 train.py --steps not-a-number');
    await page.keyboard.press('Enter');
    const toast = page.locator('.notifications-toasts .notification-list-item', { hasText: 'Debug it with Rank Debugger' });
    await toast.waitFor({ timeout: 120000 });
    await shot(page, '08-offer');
    await toast.getByRole('button', { name: 'Debug It' }).click();
    await page.locator('.quick-input-list .monaco-list-row', { hasText: 'rank 1 · node 0 · local 1' }).waitFor({ timeout: 30000 });
    await page.keyboard.press('Escape');
    say('the failed command was offered for debugging, with its ranks');
}
