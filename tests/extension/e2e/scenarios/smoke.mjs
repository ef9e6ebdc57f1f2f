// End-to-end scenario `smoke` (run.mjs runs it; RANKDEBUG_E2E_ONLY=smoke alone):
//   smoke run: a breakpoint in smoke_train.py → the Smoke run lens on smoke.sh → the diff (left: the
//   command as written, 5000 iterations; right: the smoke command; docs/smoke-diff.png with
//   RANKDEBUG_E2E_DOCS=1), smoke.sh unchanged → Debug → rank 1 → paused at the breakpoint → stop;
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ROOT, say, sleep, docs, jobProcesses, waitFor, shot, palette, openFile, goToLine, stopDebugging, frameRow } from '../helpers.mjs';

/** The lines of one side of the diff editor, as text (Monaco renders spaces as U+00A0). */
async function diffSide(page, side) {
    const rows = await page.locator(`.monaco-diff-editor .editor.${side} .view-line`).allInnerTexts();
    return rows.map((t) => t.replace(/\u00a0/g, ' '));
}

export async function scenarioSmoke(page, ws) {
    say('smoke run: a breakpoint in smoke_train.py, then the Smoke run lens on smoke.sh');
    const py = fs.readFileSync(path.join(ws, 'smoke_train.py'), 'utf8').split('\n');
    const bpLine = py.findIndex((l) => l.includes('loss = model(x)')) + 1;
    await openFile(page, 'smoke_train.py');
    await goToLine(page, bpLine);
    await page.keyboard.press('F9');
    await openFile(page, 'smoke.sh');
    const lens = page.locator('.monaco-editor .codelens-decoration a', { hasText: 'Smoke run' }).first();
    await lens.waitFor({ timeout: 90000 });
    const t0 = Date.now();
    await lens.click();
    await page.locator('.monaco-diff-editor').first().waitFor({ timeout: 60000 });
    const right = await waitFor('the smoke command on the right side of the diff', async () => {
        const lines = await diffSide(page, 'modified');
        return lines.some((l) => /--max_iters=\d+/.test(l) && !l.includes('5000')) ? lines : false;
    }, 60000);
    const left = await diffSide(page, 'original');
    const diffMs = Date.now() - t0;
    if (!left.some((l) => l.includes('--max_iters=5000'))) throw new Error(`the left side is not the command as written: ${left.join(' / ')}`);
    if (!right.some((l) => l.includes('--nproc_per_node 2'))) throw new Error(`the smoke command lost the job's shape: ${right.join(' / ')}`);
    say(`diff shown ${diffMs} ms after the lens click: ${right.filter((l) => l.includes('→')).length} changes listed`);
    await shot(page, '40-smoke-diff');
    if (docs('smoke-diff')) {
        // The diff at the width a reader needs: side bar and panel out of the way for the shot.
        await palette(page, 'View: Toggle Primary Side Bar Visibility');
        await palette(page, 'View: Toggle Panel Visibility');
        await sleep(800);
        await page.locator('.editor-group-container.active .editor-container').screenshot({ path: path.join(ROOT, 'docs', 'smoke-diff.png') });
        await palette(page, 'View: Toggle Primary Side Bar Visibility');
        await palette(page, 'View: Toggle Panel Visibility');
    }
    if (fs.readFileSync(path.join(ws, 'smoke.sh'), 'utf8').includes('max_iters=5000') === false) throw new Error('smoke.sh was edited');

    say('Debug Smoke Command (editor title) → rank 1 → paused at the breakpoint');
    const toast = page.locator('.notifications-toasts .notification-list-item', { hasText: 'Smoke run of' });
    const button = toast.getByRole('button', { name: 'Debug' });
    const tDebug = Date.now();
    if (await button.isVisible().catch(() => false)) await button.click();
    else await page.locator('.editor-actions .action-label[aria-label*="Debug Smoke Command"]').first().click();
    await page.locator('.quick-input-widget input').waitFor({ state: 'visible', timeout: 30000 });
    await page.locator('.quick-input-list .monaco-list-row', { hasText: 'rank 1 · node 0 · local 1' }).waitFor({ timeout: 30000 });
    await page.locator('.quick-input-widget input').fill('1');
    await page.keyboard.press('Enter');
    await page.locator('.debug-call-stack .monaco-list-row', { hasText: 'rank 1' }).first().waitFor({ timeout: 120000 });
    await frameRow(page, 'smoke_train.py', bpLine).first().waitFor({ timeout: 120000 });
    const debugMs = Date.now() - tDebug;
    say(`rank 1 of the smoke command paused ${debugMs} ms after Debug`);
    await shot(page, '41-smoke-debug');
    await stopDebugging(page);
    const stillThere = await waitFor('the job to end', () => (jobProcesses(ws).length ? false : []), 20000).catch(() => jobProcesses(ws));
    if (stillThere.length) throw new Error(`processes left: ${stillThere.join('; ')}`);
    return { diffMs, debugMs };
}
