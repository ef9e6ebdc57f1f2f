// End-to-end scenario `coords` (run.mjs runs it; RANKDEBUG_E2E_ONLY=coords alone): parallel
// coordinates where ranks are chosen and shown.
//   1. megatron.sh (128 nodes × 8, --tensor-model-parallel-size 8 --pipeline-model-parallel-size 4:
//      1,024 ranks, pp 4 × dp 32 × tp 8) → Debug Training Command → the quick-pick's title says
//      the layout and the flags it was read from, rows read `rank 13 · node 1 · pp 0 · dp 1 · tp 5`,
//      presets *First rank of each pipeline stage* / *One tensor-parallel group* under
//      `coordinates (megatron)` (docs/quickpick-coords.png with RANKDEBUG_E2E_DOCS=1);
//      `tp 5` typed filters to the 128 tp-5 ranks; `pp=last tp=0` typed → the title says Enter
//      takes ranks 768,776,… (32); `pp=1 xp=0` → the server's message (unknown dimension 'xp');
//      Escape;
//   2. a real job (rankdebug launch --arm, torchrun, 4 gloo ranks on a dp 2 × tp 2 DeviceMesh:
//      tests/jobs/scripts/mesh_job.py) → Training Jobs shows `rank 1 · dp 0 · tp 1 · …` →
//      Group Ranks by… offers dp and tp → tp → rows `tp 0` (ranks 0,2) and `tp 1` (ranks 1,3),
//      the view says `by tp` (docs/jobs-by-tp.png with RANKDEBUG_E2E_DOCS=1) → No grouping →
//      the groups gone → Compare Across Ranks… `dist.get_rank() % 2` → within each tp (each set
//      equal in itself), within each dp (four groups of one) → the job stopped, no process left.
// The helpers are run.mjs's own (passed in: `h`).
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';


const oneLine = (s) => s.replace(/\s+/g, ' ').trim();

async function quickPick(page, ws, h, timings) {
    // megatron.sh and pretrain_gpt.py are copied in with the workspace: a file written now
    // is not yet in Quick Open's index after the other scenarios.
    h.say('coords: the quick-pick of a Megatron command of 1,024 ranks');
    const line = await h.commandLine(page, 'megatron.sh', 'torchrun --nnodes 128');
    const title = page.locator('.quick-input-title');
    const input = page.locator('.quick-input-widget input');
    const rows = page.locator('.quick-input-list .monaco-list-row');
    const t0 = Date.now();
    await h.rowMenu(page, line, 'Debug Training Command');
    await rows.filter({ hasText: 'rank 0 · node 0 · pp 0 · dp 0 · tp 0' }).first().waitFor({ timeout: 60000 });
    timings.pickMs = Date.now() - t0;
    const said = oneLine(await title.innerText());
    if (!said.includes('(pp 4 × dp 32 × tp 8 from --tensor-model-parallel-size 8, --pipeline-model-parallel-size 4)')) throw new Error(`the title says no layout: ${said}`);
    const list = oneLine(await page.locator('.quick-input-list').innerText());
    for (const want of ['First rank of each pipeline stage', 'dp=0 tp=0 · 0,256,512,768', 'One tensor-parallel group', 'coordinates (megatron)']) {
        if (!list.includes(want)) throw new Error(`no ${want} in the quick-pick: ${list.slice(0, 600)}`);
    }
    await h.shot(page, '60-coords-quickpick');
    if (h.docs('quickpick-coords')) await page.locator('.quick-input-widget').screenshot({ path: path.join(h.ROOT, 'docs', 'quickpick-coords.png') });

    const tType = Date.now();
    await input.fill('tp 5');
    await rows.filter({ hasText: 'rank 13 · node 1 · pp 0 · dp 1 · tp 5' }).first().waitFor({ timeout: 10000 });
    await h.waitFor('rank 0 filtered out', async () => (await rows.filter({ hasText: 'rank 0 · node 0' }).count()) === 0, 10000);
    timings.filterMs = Date.now() - tType;
    const shown = (await rows.allInnerTexts()).map(oneLine).filter((t) => t.startsWith('rank '));
    if (!shown.length || shown.some((t) => !/· tp 5(?!\d)/.test(t))) throw new Error(`tp 5 shows other ranks: ${shown.slice(0, 5).join(' | ')}`);
    await h.shot(page, '61-coords-quickpick-tp5');

    const tSel = Date.now();
    await input.fill('pp=last tp=0');
    await h.waitFor('the server reading pp=last tp=0', async () => (await title.innerText()).includes('Enter: ranks 768,776,784,'), 30000);
    timings.selectorMs = Date.now() - tSel;
    if (!(await title.innerText()).includes('(32)')) throw new Error(`the title does not count the ranks: ${await title.innerText()}`);
    await h.shot(page, '62-coords-quickpick-selector');
    await input.fill('pp=1 xp=0');
    await h.waitFor('the server\'s message for pp=1 xp=0', async () => (await title.innerText()).includes("unknown dimension 'xp'"), 30000);
    h.say(`coords: ${oneLine(await title.innerText())}`);
    await h.shot(page, '63-coords-quickpick-error');
    await page.keyboard.press('Escape');
}

async function jobsView(page, ws, h, timings) {
    const python = process.env.RANKDEBUG_E2E_PYTHON ?? path.join(h.ROOT, '.venv', 'bin', 'python');
    const marker = fs.mkdtempSync(path.join(path.dirname(ws), 'mesh-'));
    // code-server's own XDG_RUNTIME_DIR (codeServer.mjs): the job lands in the registry the view reads.
    const env = { ...process.env, XDG_RUNTIME_DIR: path.join(path.dirname(ws), 'run'), MARKER_DIR: marker, LAYOUT: 'mesh' };
    h.say('coords: a dp 2 × tp 2 DeviceMesh job in Training Jobs');
    const job = spawn(python, ['-m', 'rankdebug', 'launch', '--arm', '--', path.join(path.dirname(python), 'torchrun'), '--standalone', '--nproc_per_node', '4', path.join(h.ROOT, 'tests/jobs/scripts/mesh_job.py')], {
        cwd: ws, env, detached: true, stdio: ['ignore', 'ignore', 'pipe'],
    });
    let err = '';
    job.stderr.on('data', (d) => (err += d));
    try {
        await h.waitFor('4 ranks laid out on their mesh', () => [0, 1, 2, 3].every((r) => fs.existsSync(path.join(marker, `ready-${r}`))), 240000);
        await h.palette(page, 'View: Show Run and Debug');
        await h.openJobsView(page);
        const pane = h.jobsPane(page);
        const t0 = Date.now();
        await h.palette(page, 'Rank Debugger: Refresh Training Jobs');
        const rank1 = pane.locator('.monaco-list-row', { hasText: /rank 1(?!\d)/ }).filter({ hasText: 'armed' }).first();
        await rank1.waitFor({ timeout: 60000 });
        timings.rowMs = Date.now() - t0;
        h.say(`coords: ${oneLine(await rank1.innerText())} (${timings.rowMs} ms)`);
        // The ranks record their coordinates once the mesh exists; the view's next refresh shows them.
        await h.waitFor('rank 1 with its coordinates', async () => (await rank1.innerText()).includes('dp 0 · tp 1'), 90000);
        timings.coordsMs = Date.now() - t0;
        h.say(`coords: ${oneLine(await rank1.innerText())}`);
        await h.palette(page, 'Rank Debugger: Group Ranks by…');
        await h.waitFor('the dimensions to group by', async () => (await page.locator('.quick-input-title').innerText()).includes('Group Ranks by'), 15000);
        const offered = (await page.locator('.quick-input-list .monaco-list-row').allInnerTexts()).map(oneLine);
        if (!offered.some((t) => t === 'dp') || !offered.some((t) => t === 'tp') || !offered.some((t) => t.startsWith('No grouping'))) throw new Error(`Group Ranks by… offers ${offered.join(' | ')}`);
        await page.locator('.quick-input-widget input').fill('tp');
        await page.keyboard.press('Enter');
        const tp1 = pane.locator('.monaco-list-row', { hasText: /^\s*tp 1(?!\d)/ }).first();
        await tp1.waitFor({ timeout: 15000 });
        if (!oneLine(await tp1.innerText()).includes('ranks 1,3')) throw new Error(`tp 1 holds ${oneLine(await tp1.innerText())}`);
        if ((await tp1.getAttribute('aria-expanded')) === 'false') await tp1.click();
        await pane.locator('.monaco-list-row', { hasText: /rank 3(?!\d)/ }).filter({ hasText: 'dp 1 · tp 1' }).first().waitFor({ timeout: 10000 });
        if (!(await pane.locator('.pane-header').innerText()).includes('by tp')) throw new Error('the view does not say it groups by tp');
        await h.shot(page, '64-coords-jobs-by-tp');
        if (h.docs('jobs-by-tp')) await pane.screenshot({ path: path.join(h.ROOT, 'docs', 'jobs-by-tp.png') });
        await h.palette(page, 'Rank Debugger: Group Ranks by…');
        await h.waitFor('the dimensions to group by', async () => (await page.locator('.quick-input-title').innerText()).includes('Group Ranks by'), 15000);
        await page.locator('.quick-input-widget input').fill('No grouping');
        await page.keyboard.press('Enter');
        await h.waitFor('the tp rows gone', async () => (await pane.locator('.monaco-list-row', { hasText: /^\s*tp \d/ }).count()) === 0, 15000);
        await compareWithin(page, h, timings);
    } finally {
        fs.writeFileSync(path.join(marker, 'stop'), '');
        const ended = await h.waitFor('the mesh job to end', () => job.exitCode !== null || job.signalCode !== null, 90000).catch(() => false);
        if (!ended) {
            try { process.kill(-job.pid, 'SIGTERM'); } catch { /* gone */ }
        }
    }
    if (job.exitCode !== 0) throw new Error(`the mesh job ended with ${job.exitCode ?? job.signalCode}: ${err.slice(-400)}`);
    const mine = () => h.jobProcesses(ws).filter((l) => l.includes('mesh_job.py'));
    const left = await h.waitFor('no process of the mesh job', () => (mine().length ? false : []), 20000).catch(() => mine());
    if (left.length) throw new Error(`processes left: ${left.join('; ')}`);
}

/**
 * Compare Across Ranks… on the mesh job: `dist.get_rank() % 2` (each rank's tp index) → one
 * group per tp value, all ranks together → "within each tp" → each tp set equal in itself →
 * "within each dp" → each dp set split in two (its two tp shards), no odd one.
 */
async function compareWithin(page, h, timings) {
    h.say('coords: Compare Across Ranks… within a dimension');
    await h.palette(page, 'Rank Debugger: Compare Across Ranks…');
    const input = page.locator('.quick-input-widget input');
    await input.waitFor({ timeout: 15000 });
    await input.fill('dist.get_rank() % 2');
    await page.keyboard.press('Enter');
    const title = 'Compare: dist.get_rank() % 2';
    let { frame } = await h.waitGroups(page, title, ['0,2', '1,3'], 60000);
    const select = frame.locator('select#per');
    await select.waitFor({ timeout: 15000 });
    const offered = await select.locator('option').allInnerTexts();
    if (JSON.stringify(offered) !== JSON.stringify(['all ranks together', 'within each dp', 'within each tp'])) throw new Error(`Compare offers ${JSON.stringify(offered)}`);
    const t0 = Date.now();
    await select.selectOption('tp');
    // The groups read the same before and after: wait for the verdict, finding the panel's
    // frame anew at each look (it may be drawn again meanwhile).
    frame = await h.waitFor('each tp set equal in itself', async () => {
        const now = await h.webviewWith(page, title);
        const verdict = now ? await now.locator('.verdict').innerText().catch(() => '') : '';
        return /Equal within each of the 2 sets/.test(verdict) ? now : false;
    }, 30000);
    const sets = (await frame.locator('.group .per').allInnerTexts()).join(' ');
    if (sets !== 'tp=0 tp=1') throw new Error(`within each tp: sets ${sets}`);
    timings.withinMs = Date.now() - t0;
    await frame.locator('select#per').selectOption('dp');
    ({ frame } = await h.waitGroups(page, title, ['0', '1', '2', '3'], 60000));
    const dpSets = (await frame.locator('.group .per').allInnerTexts()).join(' ');
    if (dpSets !== 'dp=0 dp=0 dp=1 dp=1') throw new Error(`within each dp: sets ${dpSets}`);
    if (await frame.locator('.group.odd').count()) throw new Error('within each dp: a group marked odd where none is larger');
    h.say(`coords: compare within each tp → tp=0 [0,2], tp=1 [1,3] equal (${timings.withinMs} ms); within each dp → four groups of one`);
    await h.shot(page, '65-coords-compare-within');
    await h.palette(page, 'View: Close All Editor Groups');
}

export async function scenarioCoords(page, ws, h) {
    const timings = {};
    await quickPick(page, ws, h, timings);
    await jobsView(page, ws, h, timings);
    return timings;
}
