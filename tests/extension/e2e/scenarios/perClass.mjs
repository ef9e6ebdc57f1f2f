// End-to-end scenario `perclass` (run.mjs runs it; RANKDEBUG_E2E_ONLY=perclass alone): a job found
// running, watched for hangs by Training Jobs, then debugged one rank per stack class.
//   rankdebug.hangSeconds 5 → a plain `torchrun --nproc_per_node 4 stuck_train.py` started outside
//   VS Code (rank 3 skips an all_reduce and waits in a barrier; ranks 0-2 wait for it) → Training
//   Jobs shown →
//   1. the found job's watch (`rankdebug watch`) → the notification "Training job looks stuck: …"
//      naming rank 3, with *Debug rank 3* (timed from the view shown);
//   2. Show Stacks on the job row → the tree: ranks 0-2 (3/4) and rank 3 (1/4);
//   3. *debug* on the node of ranks 0-2 (Debug this class) → a session `rank 0 · 2 like it`
//      (debugpy injected into the plain rank);
//   4. *Debug one rank per class* → `rank 3` too, and still one `rank 0 · 2 like it`;
//      docs/one-per-class.png with RANKDEBUG_E2E_DOCS=1 (or one-per-class);
//   5. detach, end the job → its watcher ends by itself: no `rankdebug watch` left.
// The helpers are run.mjs's own (passed in: `h`).
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { workspaceSettings } from '../helpers.mjs';

/** `rankdebug watch` processes (the found-job watchers) of job `id`. */
function watchers(h, id) {
    return h.processes(({ cmd, zombie }) => !zombie && / watch /.test(cmd) && cmd.includes(id) && cmd.includes('--hang-seconds'));
}

/** Each attach made its own parent session over the job: detach them one by one. */
async function detachAll(page, h) {
    const rows = page.locator('.debug-call-stack .monaco-list-row', { hasText: /rank \d/ });
    await h.waitFor('every debug session to end', async () => {
        if ((await rows.count()) === 0) return true;
        await page.locator('.debug-toolbar .codicon-debug-stop, .debug-toolbar .codicon-debug-disconnect').first().click({ timeout: 5000 }).catch(() => undefined);
        await h.sleep(2000);
        return (await rows.count()) === 0;
    }, 60000, 500);
}

export async function scenarioPerClass(page, ws, h) {
    const timings = {};
    h.say('per class: rankdebug.hangSeconds 5, then a plain torchrun stuck_train.py outside VS Code');
    workspaceSettings(ws, { 'rankdebug.hangSeconds': 5 });
    await h.sleep(3000); // the window reads the settings file
    await h.palette(page, 'View: Close All Editor Groups');
    await h.palette(page, 'Notifications: Clear All Notifications');
    const bin = path.dirname(h.PYTHON);
    const env = { ...process.env, PATH: `${bin}:${process.env.PATH}`, PYTHONUNBUFFERED: '1' };
    for (const k of Object.keys(env)) if (k.startsWith('RANKDEBUG_')) delete env[k];
    const job = spawn(path.join(bin, 'torchrun'), ['--nproc_per_node', '4', 'stuck_train.py'], { cwd: ws, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    const jobLog = fs.createWriteStream(path.join(h.ART, 'perclass-job.log'));
    job.stdout.on('data', (d) => jobLog.write(d));
    job.stderr.on('data', (d) => jobLog.write(d));
    const id = `${job.pid}@`;
    try {
        await h.waitFor('the four ranks', () => Object.keys(h.rankPids(job.pid)).length === 4, 120000);
        h.say('Training Jobs shown: the found job is watched');
        await h.palette(page, 'View: Show Run and Debug');
        const tView = Date.now();
        await h.openJobsView(page);
        await h.palette(page, 'Rank Debugger: Refresh Training Jobs');
        const pane = h.jobsPane(page);
        const jobRow = pane.locator('.monaco-list-row', { hasText: `torchrun · ${id}` }).first();
        await h.waitFor('the job in Training Jobs', async () => {
            if (await jobRow.count()) return true;
            await h.palette(page, 'Rank Debugger: Refresh Training Jobs');
            return false;
        }, 90000, 3000);
        await h.waitFor('its watcher', () => watchers(h, id).length === 1, 30000);

        // Other jobs found on this machine are watched too: this job's notice names its script.
        const note = page.locator('.notifications-toasts .notification-toast', { hasText: 'Training job looks stuck' }).filter({ hasText: 'stuck_train.py' }).first();
        await note.waitFor({ timeout: 120000 });
        timings.noticeMs = Date.now() - tView;
        const text = (await note.innerText()).replace(/\s+/g, ' ');
        h.say(`notification ${timings.noticeMs} ms after the view was shown: ${text.slice(0, 200)}`);
        if (!/Training job looks stuck: .*rank 3 .*stuck_train\.py/.test(text)) throw new Error(`the notification does not name rank 3: ${text}`);
        if (!(await note.locator('.monaco-button', { hasText: 'Debug rank 3' }).count())) throw new Error('the notification has no Debug rank 3 button');
        if (watchers(h, id).length !== 1) throw new Error(`expected one watcher of ${id}: ${watchers(h, id).join('; ')}`);
        await h.shot(page, '50-found-hang-notification');
        await h.palette(page, 'Notifications: Clear All Notifications');

        h.say('Show Stacks on the job row');
        const tStacks = await h.rowMenu(page, jobRow, 'Show Stacks');
        const frame = h.stacksFrame(page);
        const heads = frame.locator('main.tree .row.head');
        let seen = [];
        await h.waitFor('the tree: ranks 0-2 and rank 3 apart', async () => {
            seen = await heads.evaluateAll((els) => els.map((el) => ({ count: el.querySelector('.count')?.textContent?.trim(), who: el.querySelector('.who')?.textContent?.trim(), node: el.dataset.node }))).catch(() => []);
            if (seen.some((s) => s.count === '3/4' && s.who === '0-2') && seen.some((s) => s.count === '1/4' && s.who === '3')) return true;
            await frame.locator('#refresh').click().catch(() => undefined);
            return false;
        }, 90000, 2000).catch((e) => {
            throw new Error(`${e.message}; tree heads: ${JSON.stringify(seen)}`);
        });
        timings.stacksMs = Date.now() - tStacks;
        const button = frame.locator('#debugClasses');
        if ((await button.getAttribute('data-classes')) !== '2') throw new Error(`Debug one rank per class counts ${await button.getAttribute('data-classes')} classes`);

        h.say('debug on the node of ranks 0-2 → rank 0 · 2 like it');
        const node = seen.find((s) => s.count === '3/4' && s.who === '0-2')?.node;
        const tNode = Date.now();
        await frame.locator(`button.debugNode[data-node="${node}"]`).click();
        await h.palette(page, 'View: Show Run and Debug');
        const stack = page.locator('.debug-call-stack .monaco-list-row');
        await stack.filter({ hasText: 'rank 0 · 2 like it' }).first().waitFor({ timeout: 120000 });
        timings.classMs = Date.now() - tNode;
        h.say(`rank 0 · 2 like it ${timings.classMs} ms after the click`);

        h.say('Debug one rank per class → rank 3 as well');
        const tAll = Date.now();
        await page.locator('.tabs-container .tab', { hasText: 'Stacks:' }).first().click();
        await h.stacksFrame(page).locator('#debugClasses').click();
        await h.palette(page, 'View: Show Run and Debug');
        await stack.filter({ hasText: /^\s*rank 3(?!\d)/ }).first().waitFor({ timeout: 120000 });
        timings.perClassMs = Date.now() - tAll;
        const zero = await stack.filter({ hasText: 'rank 0 · 2 like it' }).count();
        if (zero !== 1) throw new Error(`expected one rank 0 · 2 like it session, found ${zero}`);
        const others = await stack.filter({ hasText: /^\s*rank [12](?!\d)/ }).count();
        if (others) throw new Error(`ranks 1 and 2 got sessions of their own: ${others}`);
        h.say(`rank 3 ${timings.perClassMs} ms after Debug one rank per class; one session per class`);
        await h.shot(page, '51-one-per-class');
        if (h.docs('one-per-class')) await page.screenshot({ path: path.join(h.ROOT, 'docs', 'one-per-class.png') });

        h.say('detach, end the job: its watcher ends with it');
        await detachAll(page, h);
        if (job.exitCode !== null) throw new Error('the job ended when the debugger detached');
        process.kill(-job.pid, 'SIGTERM');
        await h.waitFor('the watcher to end with the job', () => watchers(h, id).length === 0, 60000);
    } finally {
        // SIGTERM first: torchrun's workers run in sessions of their own, so a SIGKILL of its
        // group alone would leave them stuck in their collectives (found, watched and said
        // to hang by the scenarios after this one).
        try {
            process.kill(-job.pid, 'SIGTERM');
        } catch {
            // gone
        }
        await h.waitFor('the plain job to end', () => job.exitCode !== null || job.signalCode !== null, 30000).catch(() => undefined);
        try {
            process.kill(-job.pid, 'SIGKILL');
        } catch {
            // gone
        }
        workspaceSettings(ws, { 'rankdebug.hangSeconds': undefined });
    }
    return timings;
}
