// End-to-end scenario `foreign` (run.mjs runs it; RANKDEBUG_E2E_ONLY=foreign alone):
//   a plain `torchrun` job (no rankdebug) started outside VS Code appears in Training Jobs
//   with its two ranks; Show Stacks → the webview shows the ranks' column(s); a frame
//   click opens the file; Attach on `rank 1` (debugpy injected) → paused at a breakpoint;
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ART, PYTHON, say, jobProcesses, waitFor, shot, palette, goToLine, stopDebugging, frameRow, jobsPane, openJobsView, rowMenu, stacksFrame, rankPids } from '../helpers.mjs';

export async function scenarioForeignJob(page, ws) {
    say('starting a plain torchrun job outside VS Code (no rankdebug)');
    await palette(page, 'View: Show Run and Debug');
    const bin = path.dirname(PYTHON);
    const env = { ...process.env, PATH: `${bin}:${process.env.PATH}`, PYTHONUNBUFFERED: '1' };
    const job = spawn(path.join(bin, 'torchrun'), ['--nproc_per_node', '2', 'long_train.py'], { cwd: ws, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    const jobLog = fs.createWriteStream(path.join(ART, 'foreign-job.log'));
    job.stdout.on('data', (d) => {
        out += d;
        jobLog.write(d);
    });
    job.stderr.on('data', (d) => jobLog.write(d));
    const timings = {};
    try {
        await waitFor('both ranks to run', () => out.includes('rank 0 running') && out.includes('rank 1 running'), 120000);
        say('both ranks run; refreshing Training Jobs');
        await openJobsView(page);
        await palette(page, 'Rank Debugger: Refresh Training Jobs');
        const pane = jobsPane(page);
        const jobRow = pane.locator('.monaco-list-row', { hasText: `torchrun · ${job.pid}@` }).first();
        await jobRow.waitFor({ timeout: 30000 });
        const jobText = await jobRow.innerText();
        if (!/2 ranks/.test(jobText)) throw new Error(`job row: ${jobText}`);
        const pids = rankPids(job.pid);
        if (!pids[0] || !pids[1]) throw new Error(`ranks of torchrun ${job.pid}: ${JSON.stringify(pids)}`);
        const rankRowOf = (r) => pane.locator('.monaco-list-row', { hasText: new RegExp(`rank ${r}(?!\\d)[\\s\\S]*pid ${pids[r]}(?!\\d)`) }).first();
        for (const r of [0, 1]) await rankRowOf(r).waitFor({ timeout: 30000 });
        say(`Training Jobs lists ${jobText.replace(/\s+/g, ' ')} with ranks 0 and 1`);
        await shot(page, '11-foreign-job');

        say('Show Stacks');
        const tStacks = await rowMenu(page, jobRow, 'Show Stacks');
        const frame = stacksFrame(page);
        // Two ranks: the Tree view first, both ranks at the root.
        const rootCount = frame.locator('main.tree > details > summary .count').first();
        await rootCount.waitFor({ timeout: 60000 });
        timings.stacksMs = Date.now() - tStacks;
        const rootText = (await rootCount.innerText()).trim();
        if (rootText !== '2/2') throw new Error(`stack tree root: ${rootText}`);
        await frame.locator('main.tree .row', { hasText: 'long_train.py' }).first().waitFor({ timeout: 10000 });
        say(`stacks panel: the tree's root holds ${rootText} ranks (${timings.stacksMs} ms after the click)`);
        await shot(page, '12-stacks-tree');
        await frame.locator('.toggle button', { hasText: 'Columns' }).click();
        await frame.locator('.column .label').first().waitFor({ timeout: 10000 });
        const labels = (await frame.locator('.column .label').allInnerTexts()).join(' | ');
        if (!(/ranks 0[-,]1\b/.test(labels) || (/rank 0\b/.test(labels) && /rank 1\b/.test(labels)))) throw new Error(`stack columns: ${labels}`);
        await frame.locator('a.frame', { hasText: 'long_train.py' }).first().waitFor({ timeout: 10000 });
        say(`stacks panel: columns ${labels}`);
        await shot(page, '12-stacks');
        // A click on a frame opens the file at its line.
        await frame.locator('a.frame', { hasText: 'long_train.py' }).first().click();
        await page.locator('.tab.active', { hasText: 'long_train.py' }).waitFor({ timeout: 15000 });
        say('a frame click opened long_train.py');

        const py = fs.readFileSync(path.join(ws, 'long_train.py'), 'utf8').split('\n');
        const bp = py.findIndex((l) => l.includes('the e2e breakpoint')) + 1;
        await goToLine(page, bp);
        await page.keyboard.press('F9');
        await page.locator('.monaco-editor .codicon-debug-breakpoint').first().waitFor({ timeout: 15000 });

        say('Attach on rank 1 (debugpy is injected)');
        const rankRow = rankRowOf(1);
        const tAttach = await rowMenu(page, rankRow, 'Attach to Ranks');
        await page.locator('.debug-call-stack .monaco-list-row', { hasText: 'rank 1' }).first().waitFor({ timeout: 90000 });
        await frameRow(page, 'long_train.py', bp).first().waitFor({ timeout: 60000 });
        timings.attachMs = Date.now() - tAttach;
        say(`rank 1 of the plain torchrun job paused at long_train.py:${bp}, ${timings.attachMs} ms after Attach`);
        await pane.locator('.monaco-list-row', { hasText: new RegExp(`pid ${pids[1]}(?!\\d)[\\s\\S]*paused`) }).first().waitFor({ timeout: 15000 });
        await shot(page, '13-foreign-attached');
        // The breakpoint off again, so that the rank runs on once detached.
        await page.locator('.tabs-container .tab', { hasText: 'long_train.py' }).first().click();
        await goToLine(page, bp);
        await page.keyboard.press('F9');
        await stopDebugging(page);
        if (job.exitCode !== null) throw new Error('the job ended when the debugger detached');
        say('detached; the job runs on');
    } finally {
        try {
            process.kill(-job.pid, 'SIGTERM');
        } catch {
            // gone
        }
        await waitFor('the plain torchrun job to end', () => jobProcesses(ws).length === 0, 20000).catch(() => {
            try {
                process.kill(-job.pid, 'SIGKILL');
            } catch {
                // gone
            }
        });
    }
    return timings;
}
