// End-to-end scenario `together` (run.mjs runs it; RANKDEBUG_E2E_ONLY=together alone):
//   ranks together: right-click the torchrun line of together.sh → ranks 0,1 → rank 0 stops at a
//   breakpoint only it reaches; the Call Stack shows rank 0 paused on it and rank 1 paused
//   too, waiting in all_reduce (frames read from outside); Training Jobs shows both ranks'
//   live state (docs/ranks-view.png with RANKDEBUG_E2E_DOCS=1) → Step Over All Ranks → rank 0
//   on the next line (step), reported with rank 1 waiting in all_reduce → Bind Breakpoint to
//   Ranks… `1` on a line both ranks pass (the Breakpoints view shows the condition) →
//   Continue All Ranks → rank 1 alone stops there, rank 0 paused with it → the breakpoint
//   off → Continue All Ranks → both running → stop → no process left;
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ROOT, ART, say, sleep, docs, jobProcesses, waitFor, shot, palette, openFile, showFile, goToLine, setBreakpoint, commandLine, stopDebugging, frameRow, expandMainThreads, jobsPane, openJobsView, rowMenu, rankSubtrees, sideBarWidth, glyphOnLine } from '../helpers.mjs';

/**
 * Ranks together: right-click the torchrun line of together.sh → Debug Training Command →
 * ranks 0,1; only rank 0 reaches the breakpoint, and rank 1 (waiting in the all_reduce) is
 * shown paused too; Training Jobs shows both ranks' live state (docs/ranks-view.png); Step
 * Over All Ranks → rank 0 one line on, rank 1 reported waiting in all_reduce; a breakpoint
 * bound to rank 1 (Bind Breakpoint to Ranks…) on a line both pass → Continue All Ranks → rank
 * 1 alone stops there (rank 0 paused with it); the breakpoint off; Continue All Ranks → both
 * run; stop → no process left.
 */
export async function scenarioTogether(page, ws) {
    const timings = {};
    say('together: a breakpoint only rank 0 reaches, then right-click together.sh');
    await palette(page, 'View: Close All Editor Groups');
    await openFile(page, 'together_train.py');
    const py = fs.readFileSync(path.join(ws, 'together_train.py'), 'utf8').split('\n');
    const bp = py.findIndex((l) => l.includes('# the e2e breakpoint')) + 1;
    await setBreakpoint(page, bp);

    const line = await commandLine(page, 'together.sh', 'torchrun --nproc_per_node 2 together_train.py');
    const tRight = await rowMenu(page, line, 'Debug Training Command');
    await page.locator('.quick-input-list .monaco-list-row', { hasText: 'rank 1 · node 0 · local 1' }).waitFor({ timeout: 30000 });
    await page.locator('.quick-input-widget input').fill('0,1');
    const tEnter = Date.now();
    await page.keyboard.press('Enter');

    say('waiting for rank 0 at the breakpoint and rank 1 paused with it');
    let stacks;
    await waitFor('both ranks paused in the Call Stack', async () => {
        stacks = await rankSubtrees(page);
        return /Paused on breakpoint/i.test(stacks[0] ?? '') && /Paused: waiting in all_reduce/i.test(stacks[1] ?? '');
    }, 60000).catch((e) => {
        throw new Error(`${e.message}; Call Stack: ${JSON.stringify(stacks)}`);
    });
    timings.pausedMs = Date.now() - tEnter;
    // Each rank's frames: rank 0 at the breakpoint, rank 1 in the all_reduce (read from outside).
    // VS Code expands the focused session only when its tree was up to date (the rank sessions
    // stop at once here): expand a collapsed one, as a user would.
    const reduceLine = py.findIndex((l) => l.includes('dist.all_reduce(state)')) + 1;
    for (const [r, ln] of [[0, bp], [1, reduceLine]]) {
        const row = page.locator('.debug-call-stack .monaco-list-row', { hasText: new RegExp(`^\\s*rank ${r}(?!\\d)`) }).first();
        // The tree re-renders as the sessions' stacks come in: expand until the frame shows.
        await waitFor(`rank ${r}'s frame at line ${ln}`, async () => {
            if (await frameRow(page, 'together_train.py', ln).first().isVisible()) return true;
            if ((await row.getAttribute('aria-expanded')) === 'false') await row.locator('.monaco-tl-twistie').click();
            await expandMainThreads(page);
            return false;
        }, 20000, 500);
    }
    say(`both ranks paused ${timings.pausedMs} ms after the quick-pick's answer (${Date.now() - tRight} ms after the right-click): ${JSON.stringify(stacks)}`);
    await shot(page, '19-together-paused');

    await palette(page, 'View: Show Run and Debug');
    await openJobsView(page);
    const pane = jobsPane(page);
    const rankRow = (r, state) => pane.locator('.monaco-list-row', { hasText: new RegExp(`rank ${r}(?!\\d)[\\s\\S]*${state}`) }).first();
    await rankRow(0, `paused at together_train\\.py:${bp}`).waitFor({ timeout: 30000 });
    await rankRow(1, `paused at together_train\\.py:${reduceLine} in <module>, waiting in all_reduce`).waitFor({ timeout: 30000 });
    const paneRows = (await pane.locator('.monaco-list-row').allInnerTexts()).map((t) => t.replace(/\s+/g, ' ')).join(' | ');
    say(`Training Jobs: ${paneRows}`);
    // The README's picture: the pane alone, with the side bar wide enough for its rows' text.
    const narrow = await sideBarWidth(page, 760);
    await pane.screenshot({ path: path.join(ART, '20-together-jobs-view.png') });
    // RANKDEBUG_E2E_DOCS=1 refreshes the README's copy (a test run leaves the tree as it was).
    if (docs('ranks-view')) await pane.screenshot({ path: path.join(ROOT, 'docs', 'ranks-view.png') });
    await sideBarWidth(page, narrow);

    // Step Over All Ranks: rank 0 steps one line; rank 1 cannot (it waits in the all_reduce)
    // and the report says so.
    say('Step Over All Ranks');
    const stepLine = py.findIndex((l) => l.includes('# the e2e step')) + 1;
    // The report is watched from the Step on: it is a status bar message of a few seconds,
    // and the Call Stack may take that long to show the step on a loaded machine.
    let report = '';
    const reported = waitFor('the step\'s report (rank 1 waiting in all_reduce)', async () => {
        const texts = await page.locator('.statusbar-item, .notifications-toasts .notification-list-item').allInnerTexts();
        report = texts.map((t) => t.replace(/\s+/g, ' ')).find((t) => /stepped over/.test(t)) ?? report;
        return /rank 0 stepped over/.test(report) && /rank 1 waiting in all_reduce/.test(report);
    }, 30000).catch((e) => {
        throw new Error(`${e.message}; the report: ${JSON.stringify(report)}`);
    });
    reported.catch(() => {}); // said where it is awaited, below: not as an unhandled rejection first
    const tStep = Date.now();
    await palette(page, 'Rank Debugger: Step Over All Ranks');
    await waitFor(`rank 0 paused on step at line ${stepLine}, rank 1 still waiting`, async () => {
        stacks = await rankSubtrees(page);
        return /Paused on step/i.test(stacks[0] ?? '') && /Paused: waiting in all_reduce/i.test(stacks[1] ?? '') && (await frameRow(page, 'together_train.py', stepLine).count()) > 0;
    }, 30000).catch((e) => {
        throw new Error(`${e.message}; Call Stack: ${JSON.stringify(stacks)}`);
    });
    await waitFor(`the editor's current-line arrow on line ${stepLine}`, () => glyphOnLine(page, 'codicon-debug-stackframe', stepLine), 15000);
    await reported;
    await rankRow(0, `paused at together_train\\.py:${stepLine} in <module> \\(step\\)`).waitFor({ timeout: 15000 });
    timings.stepMs = Date.now() - tStep;
    say(`rank 0 stepped to line ${stepLine} ${timings.stepMs} ms after Step Over All Ranks; report: ${report.trim()}`);
    await shot(page, '20b-together-stepped');

    // A breakpoint bound to rank 1 on a line both ranks pass: only rank 1 stops there; rank 0
    // is paused with it (stop together).
    const boundLine = py.findIndex((l) => l.includes('# the e2e bound breakpoint')) + 1;
    say(`Bind Breakpoint to Ranks… on line ${boundLine}: ranks 1`);
    await showFile(page, 'together_train.py');
    await goToLine(page, boundLine);
    await palette(page, 'Rank Debugger: Bind Breakpoint to Ranks…');
    await page.locator('.quick-input-widget', { hasText: `Bind the breakpoint at together_train.py:${boundLine} to ranks` }).waitFor({ timeout: 15000 });
    await page.locator('.quick-input-widget input').fill('1');
    await sleep(700); // the language server checks the ranks as they are typed
    await page.keyboard.press('Enter');
    await page.locator('.quick-input-widget').waitFor({ state: 'hidden' });
    await palette(page, 'View: Show Run and Debug');
    const bpHeader = page.locator('.pane-header', { hasText: /^\s*Breakpoints/ }).first();
    if ((await bpHeader.getAttribute('aria-expanded')) === 'false') await bpHeader.click();
    const boundRow = page.locator('.debug-breakpoints .monaco-list-row', { hasText: 'together_train.py' }).filter({ hasText: String(boundLine) });
    await waitFor('the Breakpoints view to show the condition ranks 1', async () => /Condition: ranks 1/.test((await boundRow.first().getAttribute('aria-label')) ?? ''), 15000);
    await waitFor(`a conditional breakpoint's dot on line ${boundLine}`, () => glyphOnLine(page, 'codicon-debug-breakpoint-conditional', boundLine), 15000);
    say(`Breakpoints view: ${(await boundRow.first().getAttribute('aria-label')).replace(/\s+/g, ' ')}`);

    say('Continue All Ranks: rank 1 alone stops at the bound breakpoint');
    const tBound = Date.now();
    await palette(page, 'Rank Debugger: Continue All Ranks');
    await waitFor(`rank 1 paused on the breakpoint at line ${boundLine}, rank 0 paused with it`, async () => {
        stacks = await rankSubtrees(page);
        return (
            /Paused on breakpoint/i.test(stacks[1] ?? '') &&
            new RegExp(`together_train\\.py\\s*${boundLine}:`).test(stacks[1]) &&
            /Paused/i.test(stacks[0] ?? '') &&
            !/Paused on (breakpoint|step)/i.test(stacks[0])
        );
    }, 30000).catch((e) => {
        throw new Error(`${e.message}; Call Stack: ${JSON.stringify(stacks)}`);
    });
    await rankRow(1, `paused at together_train\\.py:${boundLine} in <module> \\(breakpoint\\)`).waitFor({ timeout: 15000 });
    await rankRow(0, 'paused at together_train\\.py:\\d+ in <module>(, waiting in all_reduce| \\(pause\\))').waitFor({ timeout: 15000 });
    timings.boundMs = Date.now() - tBound;
    const boundRows = (await pane.locator('.monaco-list-row', { hasText: /rank \d/ }).allInnerTexts()).map((t) => t.replace(/\s+/g, ' ')).join(' | ');
    say(`rank 1 at the bound breakpoint ${timings.boundMs} ms after Continue All Ranks: ${JSON.stringify(stacks)}; Training Jobs: ${boundRows}`);
    await shot(page, '20c-together-bound');
    // The bound breakpoint off again (before the ranks run on, and for the scenarios after this one).
    await showFile(page, 'together_train.py');
    await goToLine(page, boundLine);
    await page.keyboard.press('F9');
    await waitFor('the bound breakpoint to go', async () => !(await glyphOnLine(page, 'codicon-debug-breakpoint-conditional', boundLine)) && (await boundRow.count()) === 0, 15000);

    say('Continue All Ranks');
    const tCont = Date.now();
    await palette(page, 'Rank Debugger: Continue All Ranks');
    await waitFor('both ranks running in the Call Stack', async () => {
        stacks = await rankSubtrees(page);
        return stacks[0] !== undefined && stacks[1] !== undefined && !/Paused|waiting in/i.test(`${stacks[0]} ${stacks[1]}`);
    }, 30000).catch((e) => {
        throw new Error(`${e.message}; Call Stack: ${JSON.stringify(stacks)}`);
    });
    await rankRow(0, 'running').waitFor({ timeout: 15000 });
    await rankRow(1, 'running').waitFor({ timeout: 15000 });
    timings.continueMs = Date.now() - tCont;
    say(`both ranks run again ${timings.continueMs} ms after Continue All Ranks: ${JSON.stringify(stacks)}`);
    await shot(page, '21-together-running');

    say('stopping the job');
    const tStop = Date.now();
    await stopDebugging(page);
    const left = await waitFor('the job to end', () => (jobProcesses(ws).length ? false : 'none'), 20000).catch(() => jobProcesses(ws));
    if (left !== 'none') throw new Error(`processes left after stop: ${left.join('; ')}`);
    say(`stopped; no process left (${Date.now() - tStop} ms)`);
    // The breakpoint off again for the scenarios after this one.
    await page.locator('.tabs-container .tab', { hasText: 'together_train.py' }).first().click();
    await goToLine(page, bp);
    await page.keyboard.press('F9');
    return timings;
}
