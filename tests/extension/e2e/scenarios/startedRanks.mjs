// End-to-end scenario `started` (run.mjs runs it; RANKDEBUG_E2E_ONLY=started alone): *Choose
// when the ranks start* for a command whose rank count the plan cannot read.
//   started.sh runs `python started_train.py --devices 2`: a Lightning Fabric script whose
//   devices come from its command line, so the plan has no rank count. A breakpoint in the
//   script's loop → right-click → Debug Training Command → the pick says the count is not known
//   here and offers *Choose when the ranks start* → chosen → the job runs armed and a second
//   pick fills as the ranks start: `rank 0 · node 0` (the script's process) and `rank 1 · node 0`
//   (the copy Fabric starts), the title `2 of 2 started` → rank 1 checked, Enter → rank 1 alone
//   is a session in the Call Stack, paused at the breakpoint in started_train.py → stop → nothing
//   of the job is left. Then again with `1` typed before any rank has started: the choice
//   stands, and rank 1 is attached and paused once it starts.
// The helpers are run.mjs's own (passed in: `h`).

const oneLine = (s) => s.replace(/\s+/g, ' ').trim();

async function startLive(page, h, line) {
    await h.rowMenu(page, line, 'Debug Training Command');
    const widget = page.locator('.quick-input-widget');
    await widget.filter({ hasText: 'not known here' }).waitFor({ timeout: 60000 });
    const offer = page.locator('.quick-input-list .monaco-list-row', { hasText: 'Choose when the ranks start' });
    await offer.first().waitFor({ timeout: 10000 });
    const t0 = Date.now();
    await offer.first().click();
    await page.locator('.quick-input-title', { hasText: 'choose ranks as they start' }).waitFor({ timeout: 120000 });
    return t0;
}

async function pausedAlone(page, h, rank, since) {
    let stacks;
    await h.waitFor(`rank ${rank} paused in the Call Stack`, async () => {
        stacks = await h.rankSubtrees(page);
        return /Paused/i.test(stacks[rank] ?? '');
    }, 120000).catch((e) => {
        throw new Error(`${e.message}; Call Stack: ${JSON.stringify(stacks)}`);
    });
    const ms = Date.now() - since;
    await h.expandMainThreads(page);
    await h.waitFor('the breakpoint frame shown', async () => /started_train\.py/.test(JSON.stringify(await h.rankSubtrees(page))), 30000);
    stacks = await h.rankSubtrees(page);
    if (Object.keys(stacks).some((r) => r !== String(rank))) throw new Error(`only rank ${rank} was chosen: ${JSON.stringify(stacks)}`);
    return ms;
}

async function stopAndCheck(page, h, ws) {
    await h.stopDebugging(page);
    const left = await h.waitFor('nothing of the job left', () => (h.jobProcesses(ws).length ? false : 'none'), 30000).catch(() => h.jobProcesses(ws));
    if (left !== 'none') throw new Error(`processes left after stop: ${left.join('; ')}`);
}

export async function scenarioStartedRanks(page, ws, h) {
    h.say('started: a breakpoint in started_train.py, then right-click started.sh');
    const py = (await import('node:fs')).readFileSync(`${ws}/started_train.py`, 'utf8').split('\n');
    const bp = py.findIndex((l) => l.includes('# BREAK')) + 1;
    await h.openFile(page, 'started_train.py');
    await h.setBreakpoint(page, bp);
    const line = await h.commandLine(page, 'started.sh', 'python started_train.py');
    const rows = page.locator('.quick-input-list .monaco-list-row');
    const title = page.locator('.quick-input-title');

    // 1. The pick fills as the ranks start; rank 1 checked.
    const t0 = await startLive(page, h, line);
    await rows.filter({ hasText: 'rank 1 · node 0' }).first().waitFor({ timeout: 120000 });
    await rows.filter({ hasText: 'rank 0 · node 0' }).first().waitFor({ timeout: 10000 });
    const fillMs = Date.now() - t0;
    await h.waitFor('the title counting 2 of 2', async () => oneLine(await title.innerText()).includes('2 of 2 started'), 30000);
    const said = oneLine(await page.locator('.quick-input-list').innerText());
    if (!/rank 1 · node 0[^]*local 1 · pid \d+/.test(said)) throw new Error(`rank 1's row says no local rank and pid: ${said}`);
    await h.shot(page, '70-started-pick');
    await rows.filter({ hasText: 'rank 1 · node 0' }).first().click();
    const tEnter = Date.now();
    await page.keyboard.press('Enter');
    const pausedMs = await pausedAlone(page, h, 1, tEnter);
    h.say(`rank 1 (Fabric's copy) paused ${pausedMs} ms after Enter; the pick filled ${fillMs} ms after the choice`);
    await h.shot(page, '71-started-paused');
    await stopAndCheck(page, h, ws);

    // 2. `1` typed before any rank has started: it stands, and rank 1 is attached as it starts.
    const again = await h.commandLine(page, 'started.sh', 'python started_train.py');
    const t1 = await startLive(page, h, again);
    await page.locator('.quick-input-widget input').fill('1');
    await h.waitFor('the title saying what Enter takes', async () => oneLine(await title.innerText()).includes('Enter: ranks 1, now and as they start'), 30000);
    const typedEarly = (await rows.filter({ hasText: 'rank 1 · node 0' }).count()) === 0;
    await page.keyboard.press('Enter');
    const standingMs = await pausedAlone(page, h, 1, t1);
    h.say(`typed 1 ${typedEarly ? 'before rank 1 started' : '(rank 1 had started)'}: rank 1 paused ${standingMs} ms after the choice`);
    await stopAndCheck(page, h, ws);
    return { fillMs, pausedMs, standingMs, typedEarly };
}
