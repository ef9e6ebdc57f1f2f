// End-to-end scenario `armed` (run.mjs runs it; RANKDEBUG_E2E_ONLY=armed alone):
//   an armed job (`rankdebug launch --arm`): Evaluate in Rank on rank 1 → the
//   `Rank Debugger: Eval` channel shows `rank 1 › rank * 10 + 7 = 17`;
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ROOT, ART, PYTHON, say, runtimeDir, jobProcesses, waitFor, shot, palette, jobsPane, openJobsView, rowMenu, rankPids } from '../helpers.mjs';

/** An armed job (`rankdebug launch --arm`): Evaluate in Rank on rank 1 → the Eval output channel shows the value. */
export async function scenarioArmedEval(page, ws) {
    say('starting an armed job outside VS Code: rankdebug launch --arm');
    const env = { ...process.env, XDG_RUNTIME_DIR: runtimeDir(path.dirname(ws)), PATH: `${path.dirname(PYTHON)}:${process.env.PATH}` };
    const job = spawn(PYTHON, [path.join(ROOT, 'extension/python/rankdebug_main.py'), 'launch', '--arm', '--json', '--', 'torchrun', '--nproc_per_node', '2', 'long_train.py'], { cwd: ws, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    const jobLog = fs.createWriteStream(path.join(ART, 'armed-job.log'));
    job.stdout.on('data', (d) => {
        out += d;
        jobLog.write(d);
    });
    job.stderr.on('data', (d) => {
        out += d;
        jobLog.write(d);
    });
    try {
        await waitFor('both armed ranks to run', () => out.includes('rank 0 running') && out.includes('rank 1 running'), 120000);
        const torchrun = Number(fs.readdirSync('/proc').find((p) => {
            try {
                const stat = fs.readFileSync(`/proc/${p}/stat`, 'utf8');
                return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === job.pid && fs.readFileSync(`/proc/${p}/cmdline`, 'utf8').includes('torchrun');
            } catch {
                return false;
            }
        }));
        const pids = rankPids(torchrun);
        if (!pids[1]) throw new Error(`ranks of the armed job: ${JSON.stringify(pids)}`);
        await palette(page, 'View: Show Run and Debug');
        await openJobsView(page);
        await palette(page, 'Rank Debugger: Refresh Training Jobs');
        const row = jobsPane(page).locator('.monaco-list-row', { hasText: new RegExp(`rank 1(?!\\d)[\\s\\S]*pid ${pids[1]}(?!\\d)`) }).first();
        await row.waitFor({ timeout: 30000 });
        await shot(page, '14-armed-job');
        const expr = 'rank * 10 + 7';
        const t0 = await rowMenu(page, row, 'Evaluate in Rank…');
        const input = page.locator('.quick-input-widget input');
        await input.waitFor({ state: 'visible' });
        await input.fill(expr);
        await page.locator('.quick-input-list .monaco-list-row', { hasText: expr }).first().waitFor({ timeout: 10000 });
        await page.keyboard.press('Enter');
        await page.locator('.view-line', { hasText: `rank 1 › ${expr} = 17` }).first().waitFor({ timeout: 30000 });
        const ms = Date.now() - t0;
        say(`Eval output: rank 1 › ${expr} = 17 (${ms} ms after the menu click, typing included)`);
        await shot(page, '15-eval');
        return { ms };
    } finally {
        job.kill('SIGTERM');
        await waitFor('the armed job to end', () => jobProcesses(ws).length === 0, 20000).catch(() => undefined);
    }
}
