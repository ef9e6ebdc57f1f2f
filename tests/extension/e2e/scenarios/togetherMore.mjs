// End-to-end scenario `together2` (run.mjs runs it; RANKDEBUG_E2E_ONLY=together2 alone):
//   more of it: right-click together2.sh → ranks 0,1, no breakpoint (rank 1 2 s late to its loop)
//   → Run Chosen Ranks to Cursor → both paused at the line, no breakpoint left there →
//   Continue All Ranks → both run on → rank 1 raises (uncaught, 3 s collective timeout) →
//   paused on the exception, rank 0 paused with it → 6 s on, still paused, alive; the Debug
//   Console evaluates rank 1's `loss` → stop → no process left;
import * as fs from 'node:fs';
import * as path from 'node:path';
import { say, sleep, jobProcesses, waitFor, shot, palette, openFile, showFile, goToLine, commandLine, stopDebugging, frameRow, expandMainThreads, jobsPane, openJobsView, rowMenu, rankSubtrees, glyphOnLine } from '../helpers.mjs';

/** rank → pid of the rank processes of `script` under `dir` (RANK in their environment). */
function scriptRanks(dir, script) {
    const out = {};
    for (const pid of fs.readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
        try {
            const cmd = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8');
            if (!cmd.includes(script) || cmd.includes('torchrun')) continue;
            if (!fs.readlinkSync(`/proc/${pid}/cwd`).startsWith(dir)) continue;
            const rank = /(?:^|\0)RANK=(\d+)\0/.exec(fs.readFileSync(`/proc/${pid}/environ`, 'utf8'))?.[1];
            if (rank !== undefined) out[rank] = Number(pid);
        } catch {
            // gone, or not ours
        }
    }
    return out;
}

/**
 * More of the ranks together, with default settings: right-click together2.sh → ranks 0,1, no
 * breakpoint; rank 1 is 2 s late to its loop. Run Chosen Ranks to Cursor on a line of the loop
 * → both ranks paused on it (Call Stack, Training Jobs), and no breakpoint is left there
 * (Breakpoints view, glyph margin) → Continue All Ranks → both run, and keep running past the
 * line. Then rank 1 raises (uncaught), half a second after rank 0 entered an all_reduce, with a
 * 3 s process-group timeout → rank 1 paused on the exception at the raise, rank 0 paused with
 * it, waiting in all_reduce → 5 s later both still paused, every rank process alive, and the
 * Debug Console evaluates rank 1's `loss` → stop → no process left.
 */
export async function scenarioTogetherMore(page, ws) {
    const timings = {};
    const t0 = Date.now();
    const crash = path.join(ws, 'together2.crash');
    fs.rmSync(crash, { force: true });
    const py = fs.readFileSync(path.join(ws, 'together2_train.py'), 'utf8').split('\n');
    const cursorLine = py.findIndex((l) => l.includes('# the e2e cursor')) + 1;
    const raiseLine = py.findIndex((l) => l.includes('# the e2e raise')) + 1;
    const reduceLine = py.findIndex((l) => l.includes('dist.all_reduce(state)')) + 1;
    say('together2: no breakpoint; right-click together2.sh → ranks 0,1');
    await palette(page, 'View: Close All Editor Groups');
    const line = await commandLine(page, 'together2.sh', 'torchrun --nproc_per_node 2 together2_train.py');
    await rowMenu(page, line, 'Debug Training Command');
    await page.locator('.quick-input-list .monaco-list-row', { hasText: 'rank 1 · node 0 · local 1' }).waitFor({ timeout: 30000 });
    await page.locator('.quick-input-widget input').fill('0,1');
    const tEnter = Date.now();
    await page.keyboard.press('Enter');
    // Nothing stops: VS Code leaves the Run and Debug view closed (debug.openDebug).
    await page.locator('.debug-toolbar').waitFor({ timeout: 60000 });
    await palette(page, 'View: Show Run and Debug');

    let stacks;
    // VS Code expands the focused session only, and the tree re-renders as the sessions' stacks
    // come in: expand a collapsed rank session, as a user would, until its frames show.
    const expandRanks = async () => {
        for (const r of [0, 1]) {
            const row = page.locator('.debug-call-stack .monaco-list-row', { hasText: new RegExp(`^\\s*rank ${r}(?!\\d)`) }).first();
            if (!(await row.count())) continue;
            if ((await row.getAttribute('aria-expanded', { timeout: 1000 }).catch(() => null)) === 'false') await row.locator('.monaco-tl-twistie').click({ timeout: 1000 }).catch(() => undefined);
        }
        await expandMainThreads(page);
    };
    await waitFor('both rank sessions running in the Call Stack', async () => {
        stacks = await rankSubtrees(page);
        return stacks[0] !== undefined && stacks[1] !== undefined && !/Paused|waiting in/i.test(`${stacks[0]} ${stacks[1]}`);
    }, 90000).catch((e) => {
        throw new Error(`${e.message}; Call Stack: ${JSON.stringify(stacks)}`);
    });
    timings.runningMs = Date.now() - tEnter;
    say(`both ranks run ${timings.runningMs} ms after the quick-pick: ${JSON.stringify(stacks)}`);

    // Run Chosen Ranks to Cursor, from the command palette, the cursor on a line of the loop.
    await openFile(page, 'together2_train.py');
    await goToLine(page, cursorLine);
    say(`Run Chosen Ranks to Cursor: together2_train.py:${cursorLine}`);
    const tRun = Date.now();
    await palette(page, 'Rank Debugger: Run Chosen Ranks to Cursor');
    const seen = new Map(); // rank → ms after the command when the Call Stack first showed it paused
    await waitFor(`both ranks paused on the breakpoint at line ${cursorLine}`, async () => {
        stacks = await rankSubtrees(page);
        for (const r of [0, 1]) if (!seen.has(r) && /Paused on breakpoint/i.test(stacks[r] ?? '')) seen.set(r, Date.now() - tRun);
        return [0, 1].every((r) => /Paused on breakpoint/i.test(stacks[r] ?? ''));
    }, 30000, 100).catch((e) => {
        throw new Error(`${e.message}; Call Stack: ${JSON.stringify(stacks)}`);
    });
    timings.runToMs = Date.now() - tRun;
    await waitFor(`both ranks' top frames at together2_train.py:${cursorLine}`, async () => {
        await expandRanks();
        stacks = await rankSubtrees(page);
        return [0, 1].every((r) => new RegExp(`together2_train\\.py\\s*${cursorLine}:`).test(stacks[r] ?? ''));
    }, 15000).catch((e) => {
        throw new Error(`${e.message}; Call Stack: ${JSON.stringify(stacks)}`);
    });
    await palette(page, 'View: Show Run and Debug');
    await openJobsView(page);
    const pane = jobsPane(page);
    const rankRow = (r, state) => pane.locator('.monaco-list-row', { hasText: new RegExp(`rank ${r}(?!\\d)[\\s\\S]*${state}`) }).first();
    const paneRows = async () => (await pane.locator('.monaco-list-row').allInnerTexts()).map((t) => t.replace(/\s+/g, ' ')).join(' | ');
    const rowShows = (r, state, timeout = 15000) =>
        rankRow(r, state)
            .waitFor({ timeout })
            .catch(async (e) => {
                throw new Error(`Training Jobs: rank ${r} is not /${state}/: ${await paneRows()} (${e.message.split('\n')[0]})`);
            });
    for (const r of [0, 1]) await rowShows(r, `paused at together2_train\\.py:${cursorLine} in <module> \\(breakpoint\\)`, 15000);
    let report = '';
    await waitFor('the run-to report', async () => {
        const texts = await page.locator('.statusbar-item, .notifications-toasts .notification-list-item').allInnerTexts();
        report = texts.map((t) => t.replace(/\s+/g, ' ')).find((t) => / at together2_train\.py:/.test(t)) ?? report;
        return new RegExp(`ranks 0,1 at together2_train\\.py:${cursorLine}`).test(report);
    }, 10000).catch((e) => {
        throw new Error(`${e.message}; the report: ${JSON.stringify(report)}`);
    });
    say(`both ranks at line ${cursorLine} ${timings.runToMs} ms after Run Chosen Ranks to Cursor (rank 0 shown paused at ${seen.get(0)} ms, rank 1 at ${seen.get(1)} ms); report: ${report.trim()}`);
    await shot(page, '22-together2-run-to');
    // The line was a breakpoint only for the while: VS Code has none, before or after.
    const bpHeader = page.locator('.pane-header', { hasText: /^\s*Breakpoints/ }).first();
    if ((await bpHeader.getAttribute('aria-expanded')) === 'false') await bpHeader.click();
    await page.locator('.debug-breakpoints').waitFor({ timeout: 15000 });
    const bpRows = await page.locator('.debug-breakpoints .monaco-list-row').allInnerTexts();
    // (Earlier scenarios' breakpoints in other files may stay; none may be in this file.)
    if (bpRows.some((t) => /together2_train\.py/.test(t))) throw new Error(`the Breakpoints view lists a breakpoint after run-to: ${JSON.stringify(bpRows)}`);
    await showFile(page, 'together2_train.py');
    await waitFor(`the current-line arrow on line ${cursorLine}`, () => glyphOnLine(page, 'codicon-debug-stackframe', cursorLine), 15000);
    for (const cls of ['codicon-debug-breakpoint', 'codicon-debug-breakpoint-stackframe', 'codicon-debug-breakpoint-unverified']) {
        if (await glyphOnLine(page, cls, cursorLine)) throw new Error(`a breakpoint glyph (${cls}) on line ${cursorLine} after run-to`);
    }
    say(`no breakpoint on line ${cursorLine} (Breakpoints view: ${JSON.stringify(bpRows.map((t) => t.replace(/\s+/g, ' ')))})`);

    say('Continue All Ranks');
    const tCont = Date.now();
    await palette(page, 'Rank Debugger: Continue All Ranks');
    const running = async () => {
        stacks = await rankSubtrees(page);
        return stacks[0] !== undefined && stacks[1] !== undefined && !/Paused|waiting in/i.test(`${stacks[0]} ${stacks[1]}`);
    };
    await waitFor('both ranks running in the Call Stack', running, 30000).catch((e) => {
        throw new Error(`${e.message}; Call Stack: ${JSON.stringify(stacks)}`);
    });
    for (const r of [0, 1]) await rowShows(r, 'running', 15000);
    timings.continueMs = Date.now() - tCont;
    // They pass the line every 50 ms: had its breakpoint stayed, they would stop there again.
    await sleep(1500);
    if (!(await running())) throw new Error(`a rank stopped again after Continue All Ranks (the run-to line kept a breakpoint?): ${JSON.stringify(stacks)}`);
    say(`both ranks run again ${timings.continueMs} ms after Continue All Ranks, and still 1.5 s later`);

    // A crash held for inspection.
    say('rank 1 raises (uncaught) while rank 0 waits for it in all_reduce');
    const before = scriptRanks(ws, 'together2_train.py');
    if (!before[0] || !before[1]) throw new Error(`rank processes: ${JSON.stringify(before)}`);
    const tCrash = Date.now();
    fs.writeFileSync(crash, '');
    // VS Code words an exception stop with debugpy's description (the message), not "Paused on
    // exception": the Call Stack shows rank 1 as "loss is 7.25" at the raise; the exception
    // widget and Training Jobs' reason say it is the exception.
    const raisedHere = new RegExp(`loss is 7\\.25[\\s\\S]*together2_train\\.py\\s*${raiseLine}:`, 'i');
    await waitFor(`rank 1 paused on the exception at line ${raiseLine}, rank 0 paused with it`, async () => {
        await expandRanks();
        stacks = await rankSubtrees(page);
        return raisedHere.test(stacks[1] ?? '') && /Paused/i.test(stacks[0] ?? '');
    }, 30000, 100).catch((e) => {
        throw new Error(`${e.message}; Call Stack: ${JSON.stringify(stacks)}`);
    });
    timings.crashMs = Date.now() - tCrash;
    const raisedRow = `paused at together2_train\\.py:${raiseLine} in <module> \\(exception\\)`;
    await rowShows(1, raisedRow, 15000);
    await rowShows(0, `paused at together2_train\\.py:${reduceLine} in <module>, waiting in all_reduce`, 15000);
    await waitFor('rank 0 shown waiting in all_reduce in the Call Stack', async () => {
        await expandRanks();
        stacks = await rankSubtrees(page);
        return /Paused: waiting in all_reduce/i.test(stacks[0] ?? '') && new RegExp(`together2_train\\.py\\s*${reduceLine}:`).test(stacks[0] ?? '');
    }, 15000).catch((e) => {
        throw new Error(`${e.message}; Call Stack: ${JSON.stringify(stacks)}`);
    });
    // Rank 1's frame at the raise: the editor's exception widget.
    await frameRow(page, 'together2_train.py', raiseLine).first().click();
    const widget = page.locator('.exception-widget', { hasText: 'ValueError' });
    await widget.first().waitFor({ timeout: 15000 });
    const widgetText = (await widget.first().innerText()).replace(/\s+/g, ' ');
    if (!/Exception has occurred: ValueError/.test(widgetText) || !/loss is 7\.25/.test(widgetText)) throw new Error(`the exception widget says: ${widgetText}`);
    say(`rank 1 paused on the exception ${timings.crashMs} ms after the crash file, rank 0 with it: ${JSON.stringify(stacks)}; exception widget: ${widgetText.slice(0, 120)}`);
    await shot(page, '23-together2-raised');

    // Longer than the 3 s collective timeout.
    await sleep(Math.max(0, tCrash + 6000 - Date.now()));
    await expandRanks();
    stacks = await rankSubtrees(page);
    if (!raisedHere.test(stacks[1] ?? '') || !/Paused: waiting in all_reduce/i.test(stacks[0] ?? '')) throw new Error(`6 s after the crash the ranks are not paused as they were: ${JSON.stringify(stacks)}`);
    const after = scriptRanks(ws, 'together2_train.py');
    if (after[0] !== before[0] || after[1] !== before[1]) throw new Error(`rank processes changed 6 s after the crash: ${JSON.stringify(before)} → ${JSON.stringify(after)}`);
    await rowShows(1, raisedRow, 5000);
    say(`6 s after the crash: both still paused, rank processes alive (${JSON.stringify(after)})`);

    // The Debug Console, on rank 1's frame at the raise (focused above).
    await palette(page, 'Focus on Debug Console View');
    const repl = page.locator('.repl-input-wrapper .monaco-editor');
    await repl.waitFor();
    await repl.click();
    await page.keyboard.type('loss');
    await page.keyboard.press('Enter');
    await waitFor("the Debug Console's answer 7.25", async () => (await page.locator('.repl .monaco-list-row').allInnerTexts()).some((t) => t.trim() === '7.25'), 30000).catch(async (e) => {
        throw new Error(`${e.message}; Debug Console: ${JSON.stringify(await page.locator('.repl .monaco-list-row').allInnerTexts())}`);
    });
    say("Debug Console on rank 1: loss → 7.25");
    await shot(page, '24-together2-eval');
    if (!Object.keys(scriptRanks(ws, 'together2_train.py')).length) throw new Error('the job ended while rank 1 was held');

    say('stopping the job');
    const tStop = Date.now();
    await stopDebugging(page);
    const left = await waitFor('the job to end', () => (jobProcesses(ws).length ? false : 'none'), 20000).catch(() => jobProcesses(ws));
    fs.rmSync(crash, { force: true });
    if (left !== 'none') throw new Error(`processes left after stop: ${left.join('; ')}`);
    say(`stopped; no process left (${Date.now() - tStop} ms)`);
    timings.totalMs = Date.now() - t0;
    return timings;
}
