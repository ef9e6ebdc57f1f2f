// End-to-end scenario `sessioncap` (run.mjs runs it; RANKDEBUG_E2E_ONLY=sessioncap alone): a job
// with more chosen ranks than rankdebug.maxSessions.
//   rankdebug.maxSessions 2 in the workspace's settings, a breakpoint only rank 0 reaches in
//   cap_train.py (stdlib ranks under torchrun) → right-click cap.sh → `0-3` →
//   1. rank 0 at the breakpoint: the Call Stack has exactly two rank sessions (ranks 0 and 1,
//      both paused), the Debug Console says ranks 2,3 are debugged without a session, and
//      Training Jobs shows all four paused (ranks 2 and 3 at their file:line); the picture
//      docs/session-cap.png with RANKDEBUG_E2E_DOCS=1 (or session-cap);
//   2. Open Session on rank 3 (every session stopped): a `rank 3` session shows it paused where
//      it is, past the cap, and the Debug Console says so;
//   3. Continue All Ranks: all four run (Call Stack, Training Jobs), and the cap is kept again
//      (two sessions: the least recently used running one ended);
//   4. Open Session on a rank without a session (running): its session appears and the count
//      stays at two; Pause All Ranks → all four paused, the rank whose session the cap ended
//      included (it is debugged over its link again) →
//   stop → no process left.
// The helpers are run.mjs's own (passed in: `h`).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { workspaceSettings, typeRanks } from '../helpers.mjs';

/**
 * A command from the palette, again when the palette closed or went inert as it opened (the
 * workbench takes focus back when a session starts or the Debug Console takes it).
 */
async function command(page, h, text) {
    const input = page.locator('.quick-input-widget input');
    for (let attempt = 1; ; attempt++) {
        try {
            await page.keyboard.press('F1');
            await input.waitFor({ state: 'visible', timeout: 10000 });
            await input.fill(`>${text}`, { timeout: 10000 });
            await page.locator('.quick-input-list .monaco-list-row', { hasText: text.split(': ').pop() }).first().waitFor({ timeout: 10000 });
            await page.keyboard.press('Enter');
            return;
        } catch (e) {
            if (attempt === 3) throw e;
            h.say(`the palette for ${text}: ${e instanceof Error ? e.message.split('\n')[0] : e}; again`);
            await page.keyboard.press('Escape');
            await h.sleep(500);
        }
    }
}

/** The Debug Console's lines. */
async function consoleLines(page, h) {
    await command(page, h, 'Focus on Debug Console View');
    await page.locator('.repl').first().waitFor({ timeout: 15000 });
    return (await page.locator('.repl .monaco-list-row').allInnerTexts()).map((t) => t.replace(/\s+/g, ' ').trim());
}

/** Waits until the Debug Console has a line matching `re`; answers it. */
async function consoleSays(page, h, re, what, timeoutMs = 20000) {
    let lines = [];
    await h.waitFor(`the Debug Console to say ${what}`, async () => {
        lines = await consoleLines(page, h);
        return lines.some((l) => re.test(l));
    }, timeoutMs, 1000).catch((e) => {
        throw new Error(`${e.message}; Debug Console: ${JSON.stringify(lines.slice(-12))}`);
    });
    return lines.find((l) => re.test(l));
}

export async function scenarioSessionCap(page, ws, h) {
    const timings = {};
    const py = fs.readFileSync(path.join(ws, 'cap_train.py'), 'utf8').split('\n');
    const bp = py.findIndex((l) => l.includes('# the e2e breakpoint')) + 1;
    if (bp < 1) throw new Error('cap_train.py changed: update sessionCap.mjs');

    h.say('session cap: rankdebug.maxSessions 2, a breakpoint only rank 0 reaches, then right-click cap.sh');
    workspaceSettings(ws, { 'rankdebug.maxSessions': 2 });
    await h.sleep(3000); // the window reads the settings file
    await command(page, h, 'View: Close All Editor Groups');
    await h.openFile(page, 'cap_train.py');
    await h.setBreakpoint(page, bp);
    const line = await h.commandLine(page, 'cap.sh', 'torchrun --nproc_per_node 4 cap_train.py');
    const tRight = await h.rowMenu(page, line, 'Debug Training Command');
    await typeRanks(page, '0-3');
    const tEnter = Date.now();
    await page.keyboard.press('Enter');

    h.say('waiting for rank 0 at the breakpoint, rank 1 paused with it, and Training Jobs showing ranks 2 and 3 paused');
    let stacks;
    await h.waitFor('ranks 0 and 1 paused in the Call Stack', async () => {
        stacks = await h.rankSubtrees(page);
        return /Paused on breakpoint/i.test(stacks[0] ?? '') && /Paused/i.test(stacks[1] ?? '');
    }, 120000).catch((e) => {
        throw new Error(`${e.message}; Call Stack: ${JSON.stringify(stacks)}`);
    });
    await command(page, h, 'View: Show Run and Debug');
    await h.openJobsView(page);
    const pane = h.jobsPane(page);
    // This job's rows (another job on the machine may be listed too): by pid once known.
    const pids = {};
    const rankRow = (r, state) => pane.locator('.monaco-list-row', { hasText: new RegExp(`rank ${r}(?!\\d)\\s*pid ${pids[r] ?? '\\d+'}(?!\\d)[\\s\\S]*${state}`) }).first();
    const paneRows = async () => (await pane.locator('.monaco-list-row').allInnerTexts()).map((t) => t.replace(/\s+/g, ' ').trim());
    const rowShows = (r, state, timeout = 30000) =>
        rankRow(r, state)
            .waitFor({ timeout })
            .catch(async (e) => {
                throw new Error(`Training Jobs: rank ${r} is not /${state}/: ${(await paneRows()).join(' | ')} (${e.message.split('\n')[0]})`);
            });
    await rowShows(0, `paused at cap_train\\.py:${bp}`);
    for (const r of [1, 2, 3]) await rowShows(r, 'paused at cap_train\\.py:\\d+');
    for (const r of [0, 1, 2, 3]) pids[r] = /pid (\d+)/.exec(await rankRow(r, 'paused at cap_train\\.py:\\d+').innerText())?.[1];
    if (new Set(Object.values(pids)).size !== 4 || Object.values(pids).some((p) => !p)) throw new Error(`the ranks' pids: ${JSON.stringify(pids)}`);
    timings.pausedMs = Date.now() - tEnter;
    stacks = await h.rankSubtrees(page);
    if (Object.keys(stacks).sort().join(',') !== '0,1') throw new Error(`expected exactly the sessions of ranks 0 and 1 (the cap), found: ${JSON.stringify(stacks)}`);
    const rows = await paneRows();
    h.say(`all four paused ${timings.pausedMs} ms after the quick-pick's answer (${Date.now() - tRight} ms after the right-click); Call Stack: ${JSON.stringify(stacks)}; Training Jobs: ${rows.join(' | ')}`);
    const said = await consoleSays(page, h, /rankdebug\.maxSessions is 2: ranks 2,3 debugged without a session/, 'ranks 2,3 are debugged without a session');
    h.say(`Debug Console: ${said}`);

    // The picture: the Call Stack and Training Jobs side by side in a wide side bar.
    await command(page, h, 'View: Show Run and Debug');
    const narrow = await h.sideBarWidth(page, 760);
    // The mouse off the side bar: a hover left by the drag would take the clicks.
    await page.mouse.move(1300, 950);
    await h.sleep(500);
    for (const name of ['Variables', 'Watch', 'Breakpoints']) {
        const header = page.locator('.pane-header', { hasText: new RegExp(`^\\s*${name}`) }).first();
        // A synthetic click: a hover the workbench keeps up may lie over the header.
        if ((await header.count()) && (await header.getAttribute('aria-expanded')) === 'true') await header.dispatchEvent('click');
    }
    await page.mouse.move(1300, 950);
    // Rank 0's frame at the breakpoint in the picture; the focus in the Call Stack (on the
    // toolbar's Start Debugging button, where the view put it, a hover would show).
    const row0 = page.locator('.debug-call-stack .monaco-list-row', { hasText: /^\s*rank 0(?!\d)/ }).first();
    await row0.click();
    await h.waitFor(`rank 0's frame at cap_train.py:${bp}`, async () => {
        stacks = await h.rankSubtrees(page);
        if (new RegExp(`cap_train\\.py\\s*${bp}:`).test(stacks[0] ?? '')) return true;
        if ((await row0.getAttribute('aria-expanded').catch(() => null)) === 'false') await row0.locator('.monaco-tl-twistie').click({ timeout: 1000 }).catch(() => undefined);
        await h.expandMainThreads(page);
        return false;
    }, 20000, 500).catch((e) => {
        throw new Error(`${e.message}; Call Stack: ${JSON.stringify(stacks)}`);
    });
    await page.mouse.move(1300, 950);
    await h.sleep(500);
    await h.shot(page, '50-session-cap');
    if (h.docs('session-cap')) await page.screenshot({ path: path.join(h.ROOT, 'docs', 'session-cap.png') });

    h.say('Open Session on rank 3 while every session is stopped');
    const tOpen = Date.now();
    await h.rowMenu(page, rankRow(3, 'paused'), 'Open Session');
    await h.waitFor('a rank 3 session, paused', async () => {
        stacks = await h.rankSubtrees(page);
        return /Paused/i.test(stacks[3] ?? '');
    }, 30000, 200).catch((e) => {
        throw new Error(`${e.message}; Call Stack: ${JSON.stringify(stacks)}`);
    });
    timings.openPausedMs = Date.now() - tOpen;
    const row3 = page.locator('.debug-call-stack .monaco-list-row', { hasText: /^\s*rank 3(?!\d)/ }).first();
    await h.waitFor("rank 3's frame in cap_train.py", async () => {
        stacks = await h.rankSubtrees(page);
        if (/cap_train\.py\s*\d+:/.test(stacks[3] ?? '')) return true;
        if ((await row3.getAttribute('aria-expanded').catch(() => null)) === 'false') await row3.locator('.monaco-tl-twistie').click({ timeout: 1000 }).catch(() => undefined);
        await h.expandMainThreads(page);
        return false;
    }, 20000, 500).catch((e) => {
        throw new Error(`${e.message}; Call Stack: ${JSON.stringify(stacks)}`);
    });
    if (Object.keys(stacks).sort().join(',') !== '0,1,3') throw new Error(`expected the sessions of ranks 0, 1 and 3, found: ${JSON.stringify(stacks)}`);
    h.say(`rank 3's session shown paused ${timings.openPausedMs} ms after Open Session: ${stacks[3]}`);
    h.say(`Debug Console: ${await consoleSays(page, h, /Rank 3 gets a session past rankdebug\.maxSessions \(2\)/, 'rank 3 is past the cap')}`);
    await h.shot(page, '51-session-cap-open-paused');

    h.say('Continue All Ranks');
    const tCont = Date.now();
    await command(page, h, 'Rank Debugger: Continue All Ranks');
    await command(page, h, 'View: Show Run and Debug');
    for (const r of [0, 1, 2, 3]) await rowShows(r, 'running');
    timings.continueMs = Date.now() - tCont;
    h.say(`all four running ${timings.continueMs} ms after Continue All Ranks: ${(await paneRows()).join(' | ')}`);
    await h.waitFor('the cap kept again: two rank sessions, running', async () => {
        stacks = await h.rankSubtrees(page);
        const ranks = Object.keys(stacks);
        return ranks.length === 2 && !ranks.some((r) => /Paused|waiting in/i.test(stacks[r]));
    }, 30000).catch((e) => {
        throw new Error(`${e.message}; Call Stack: ${JSON.stringify(stacks)}`);
    });
    timings.trimMs = Date.now() - tCont;
    const kept = Object.keys(stacks).map(Number);
    h.say(`two sessions ${timings.trimMs} ms after Continue All Ranks: ranks ${kept.join(',')}`);

    const target = [1, 2, 3].find((r) => !kept.includes(r));
    h.say(`Open Session on rank ${target} (running, no session)`);
    const tOpen2 = Date.now();
    await h.rowMenu(page, rankRow(target, 'running'), 'Open Session');
    await h.waitFor(`a rank ${target} session, and two sessions in all`, async () => {
        stacks = await h.rankSubtrees(page);
        return stacks[target] !== undefined && Object.keys(stacks).length === 2;
    }, 30000, 200).catch((e) => {
        throw new Error(`${e.message}; Call Stack: ${JSON.stringify(stacks)}`);
    });
    timings.openRunningMs = Date.now() - tOpen2;
    const ended = kept.find((r) => stacks[r] === undefined);
    h.say(`rank ${target}'s session shown ${timings.openRunningMs} ms after Open Session; rank ${ended}'s session ended for the cap: ${JSON.stringify(stacks)}`);
    await h.sleep(2000); // a third session, were one to start
    stacks = await h.rankSubtrees(page);
    if (Object.keys(stacks).length !== 2) throw new Error(`the cap is not kept: ${JSON.stringify(stacks)}`);
    for (const r of [0, 1, 2, 3]) await rowShows(r, 'running', 15000);
    await h.shot(page, '52-session-cap-open-running');

    h.say('Pause All Ranks: all four pause, the rank whose session the cap ended included');
    const tPause = Date.now();
    await command(page, h, 'Rank Debugger: Pause All Ranks');
    await command(page, h, 'View: Show Run and Debug');
    for (const r of [0, 1, 2, 3]) await rowShows(r, 'paused at cap_train\\.py:\\d+');
    timings.pauseMs = Date.now() - tPause;
    h.say(`all four paused ${timings.pauseMs} ms after Pause All Ranks: ${(await paneRows()).join(' | ')}`);
    await h.shot(page, '53-session-cap-paused-again');

    h.say('stopping the job');
    await h.sideBarWidth(page, narrow);
    await h.stopDebugging(page);
    const left = await h.waitFor('the job to end', () => (h.jobProcesses(ws).length ? false : 'none'), 30000).catch(() => h.jobProcesses(ws));
    if (left !== 'none') throw new Error(`processes left after stop: ${left.join('; ')}`);
    workspaceSettings(ws, { 'rankdebug.maxSessions': undefined });
    // The breakpoint off again for the scenarios after this one.
    await h.showFile(page, 'cap_train.py');
    await h.goToLine(page, bp);
    await page.keyboard.press('F9');
    return timings;
}
