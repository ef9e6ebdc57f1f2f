// End-to-end scenario `jobs` (run.mjs runs it; RANKDEBUG_E2E_ONLY=jobs alone):
//   a job started with `rankdebug launch` outside VS Code appears in Training Jobs; Attach
//   → `rank 0` paused at the breakpoint; stop;
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ROOT, ART, PYTHON, say, runtimeDir, sleep, jobProcesses, waitFor, shot, palette, stopDebugging, frameRow } from '../helpers.mjs';

export async function scenarioJobsView(page, ws, bpLine, cmdLine) {
    say('starting a job outside VS Code: rankdebug launch --ranks 0');
    const env = { ...process.env, XDG_RUNTIME_DIR: runtimeDir(path.dirname(ws)), PATH: `${path.dirname(PYTHON)}:${process.env.PATH}` };
    const job = spawn(PYTHON, [path.join(ROOT, 'extension/python/rankdebug_main.py'), 'launch', '--json', '--ranks', '0', '--file', 'train.sh', '--line', String(cmdLine)], {
        cwd: ws,
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    const jobLog = fs.createWriteStream(path.join(ART, 'outside-job.log'));
    job.stdout.on('data', (d) => {
        out += d;
        jobLog.write(d);
    });
    job.stderr.on('data', (d) => jobLog.write(d));
    try {
        await waitFor('the job to listen', () => out.includes('"listening"'), 90000);
        const jobId = /"event": "job", "job": "([^"]+)"/.exec(out)?.[1] ?? /"job": "([^"]+)"/.exec(out)?.[1];
        if (!jobId) throw new Error(`no job id in: ${out}`);
        say('job listening; attaching from the Training Jobs view');
        await palette(page, 'View: Show Run and Debug');
        await palette(page, 'Rank Debugger: Refresh Training Jobs');
        const header = page.locator('.pane-header', { hasText: 'Training Jobs' });
        await header.waitFor({ timeout: 15000 });
        if ((await header.getAttribute('aria-expanded')) === 'false') await header.click();
        const jobRow = page.locator('.monaco-list-row', { hasText: `torchrun · ${jobId}` }).first();
        await jobRow.waitFor({ timeout: 30000 });
        await page.locator('.monaco-list-row', { hasText: 'rank 0' }).first().waitFor({ timeout: 30000 });
        await shot(page, '05-jobs-view');
        await jobRow.click({ button: 'right' });
        const item = page.getByRole('menuitem', { name: 'Attach to Ranks' });
        await item.click();
        await sleep(1500);
        if (await item.isVisible()) {
            say('the context menu is still open; clicking Attach to Ranks again');
            await item.click();
        }
        await page.locator('.debug-call-stack .monaco-list-row', { hasText: 'rank 0' }).first().waitFor({ timeout: 60000 });
        await frameRow(page, 'train.py', bpLine).first().waitFor({ timeout: 60000 });
        say('rank 0 of the outside job paused at the breakpoint');
        await shot(page, '06-attached');
        await stopDebugging(page);
    } finally {
        job.kill('SIGTERM');
        await waitFor('the outside job to end', () => jobProcesses(ws).length === 0, 20000).catch(() => undefined);
    }
    const left = jobProcesses(ws);
    if (left.length) throw new Error(`processes left: ${left.join('; ')}`);
}
