// End-to-end scenario `armui` (run.mjs runs it; RANKDEBUG_E2E_ONLY=armui alone):
//   an armed job started from the editor: right-click the torchrun line of long.sh →
//   *No rank now — arm every rank* → the job runs with no rank session, Training Jobs shows
//   it armed → Attach on rank 1 (clicked twice) → exactly one `rank 1` under the job's
//   session, stopped at a breakpoint → stop → no process left;
import * as fs from 'node:fs';
import * as path from 'node:path';
import { say, sleep, jobProcesses, waitFor, shot, palette, openFile, goToLine, setBreakpoint, commandLine, stopDebugging, frameRow, jobsPane, openJobsView, rowMenu } from '../helpers.mjs';

/** The Call Stack rows that are the session `rank N` (not its threads or frames). */
async function rankSessionRows(page, rank) {
    const rows = await page.locator('.debug-call-stack .monaco-list-row').evaluateAll((els) => els.map((el) => ({ text: el.innerText, level: Number(el.getAttribute('aria-level') ?? 0) })));
    return rows.filter((r) => new RegExp(`^\\s*rank ${rank}(?!\\d)`).test(r.text));
}

/**
 * An armed job started from the editor: right-click the torchrun line of long.sh → *No rank
 * now — arm every rank* → no rank session, Training Jobs shows the job armed → Attach on
 * rank 1 (twice) → one `rank 1` under the job's session, at a breakpoint → stop → nothing left.
 */
export async function scenarioArmedFromEditor(page, ws) {
    const timings = {};
    say('armed from the editor: a breakpoint in long_train.py, then right-click long.sh');
    // Earlier scenarios leave a Stacks panel and side editors: a narrow group would put the
    // overview ruler over the line to right-click.
    await palette(page, 'View: Close All Editor Groups');
    await openFile(page, 'long_train.py');
    const py = fs.readFileSync(path.join(ws, 'long_train.py'), 'utf8').split('\n');
    const bp = py.findIndex((l) => l.includes('the e2e breakpoint')) + 1;
    await setBreakpoint(page, bp);

    const line = await commandLine(page, 'long.sh', 'torchrun --nproc_per_node 2 long_train.py');
    await rowMenu(page, line, 'Debug Training Command'); // clicks again if the menu stays open
    const armRow = page.locator('.quick-input-list .monaco-list-row', { hasText: 'No rank now — arm every rank' });
    await armRow.waitFor({ timeout: 30000 });
    await armRow.click();
    await shot(page, '16-arm-pick');
    const checkedRows = await page.locator('.quick-input-list .monaco-list-row').evaluateAll((els) =>
        els.filter((el) => el.querySelector('input[type=checkbox]')?.checked || el.getAttribute('aria-checked') === 'true').map((el) => el.innerText.replace(/\s+/g, ' ')),
    );
    if (checkedRows.length !== 1 || !/Arm every rank/.test(checkedRows[0])) {
        say(`checked after the click: ${JSON.stringify(checkedRows)}; typing "arm" instead`);
        await page.locator('.quick-input-widget input').fill('arm');
    }
    const tStart = Date.now();
    await page.keyboard.press('Enter');

    say('the job runs armed: waiting for Training Jobs to list it');
    await page.locator('.debug-toolbar').waitFor({ timeout: 60000 });
    await palette(page, 'View: Show Run and Debug');
    await openJobsView(page);
    const pane = jobsPane(page);
    const jobRow = pane.locator('.monaco-list-row', { hasText: /torchrun · \d{8}-\d{6}-\d+/ }).first();
    await waitFor('the armed job in Training Jobs', async () => {
        if (!(await jobRow.count())) await palette(page, 'Rank Debugger: Refresh Training Jobs');
        return /armed/.test(await jobRow.innerText());
    }, 120000, 2000);
    const rankRow = pane.locator('.monaco-list-row', { hasText: /rank 1(?!\d)[\s\S]*armed/ }).first();
    await waitFor('rank 1 armed', async () => {
        if (await rankRow.count()) return true;
        await palette(page, 'Rank Debugger: Refresh Training Jobs');
        return false;
    }, 120000, 2000);
    timings.armedMs = Date.now() - tStart;
    say(`Training Jobs: ${(await jobRow.innerText()).replace(/\s+/g, ' ')}; rank 1 armed (${timings.armedMs} ms after Enter)`);
    const early = await rankSessionRows(page, '\\d+');
    if (early.length) throw new Error(`a rank session exists before any attach: ${JSON.stringify(early)}`);
    await shot(page, '17-armed-from-editor');

    say('Attach on rank 1, clicked twice');
    await rankRow.hover();
    const inline = rankRow.locator('.action-label[aria-label^="Attach to Ranks"]').first();
    let tAttach;
    if (await inline.isVisible().catch(() => false)) {
        tAttach = Date.now();
        await inline.click();
        await inline.click({ timeout: 2000 }).catch(() => say('the second click found no Attach button (the row changed)'));
    } else {
        tAttach = await rowMenu(page, rankRow, 'Attach to Ranks');
        await rankRow.click({ button: 'right' });
        const again = page.getByRole('menuitem', { name: 'Attach to Ranks' });
        if (await again.isVisible({ timeout: 2000 }).catch(() => false)) await again.click();
        else await page.keyboard.press('Escape');
    }
    await page.locator('.debug-call-stack .monaco-list-row', { hasText: 'rank 1' }).first().waitFor({ timeout: 90000 });
    await frameRow(page, 'long_train.py', bp).first().waitFor({ timeout: 60000 });
    timings.attachMs = Date.now() - tAttach;
    say(`rank 1 stopped at long_train.py:${bp}, ${timings.attachMs} ms after Attach`);
    await sleep(3000); // time for a second session, were one to start
    const sessions = await rankSessionRows(page, 1);
    if (sessions.length !== 1) throw new Error(`expected exactly one rank 1 session, found ${sessions.length}: ${JSON.stringify(sessions)}`);
    const parent = await page.locator('.debug-call-stack .monaco-list-row', { hasText: 'long_train.py · armed' }).first().evaluate((el) => Number(el.getAttribute('aria-level') ?? 0)).catch(() => -1);
    if (parent < 1 || sessions[0].level <= parent) throw new Error(`rank 1 (level ${sessions[0].level}) is not under the job's session (level ${parent})`);
    const others = await rankSessionRows(page, '(?!1(?!\\d))\\d+');
    if (others.length) throw new Error(`other ranks got sessions: ${JSON.stringify(others)}`);
    await pane.locator('.monaco-list-row', { hasText: /rank 1(?!\d)[\s\S]*paused/ }).first().waitFor({ timeout: 15000 });
    say('exactly one rank 1 session, under the job\'s session; Training Jobs shows it paused');
    await shot(page, '18-armed-attached');

    say('stopping the armed job');
    const tStop = Date.now();
    await stopDebugging(page);
    await waitFor('the toolbar to go', async () => !(await page.locator('.debug-toolbar').isVisible()), 30000).catch(() => undefined);
    const left = await waitFor('the armed job to end', () => (jobProcesses(ws).length ? false : 'none'), 20000).catch(() => jobProcesses(ws));
    if (left !== 'none') throw new Error(`processes left after stop: ${left.join('; ')}`);
    say(`stopped; no process left (${Date.now() - tStop} ms)`);
    // The breakpoint off again for the scenarios after this one.
    await page.locator('.tabs-container .tab', { hasText: 'long_train.py' }).first().click();
    await goToLine(page, bp);
    await page.keyboard.press('F9');
    return timings;
}
