// End-to-end scenario `rightclick` (run.mjs runs it; RANKDEBUG_E2E_ONLY=rightclick alone):
//   right-click the torchrun line → Debug Training Command → pick rank 1 → Call Stack shows
//   `rank 1` paused at the breakpoint line, Variables show rank = 1, the Debug Console
//   evaluates RANK to '1'; stop → no process of the job is left;
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ART, TRACE, PYTHON, say, jobProcesses, waitFor, shot, openFile, setBreakpoint, commandLine, stopDebugging, frameRow, rowMenu } from '../helpers.mjs';

/**
 * The phases of a debug start from the marks in TRACE between `t0` and `t1` (ms): the
 * quick-pick's answer → the resolver → the job session → rankdebug launch running (started
 * ahead) → torchrun started → rank 1's interpreter → its breakpoints ("go": at once when
 * they came with the launch) → its first hit → debugpy connected → `stopped` sent → shown;
 * then ours, summed.
 */
function phases(t0, t1) {
    const marks = [];
    for (const line of fs.readFileSync(TRACE, 'utf8').split('\n')) {
        const m = /^(\d+\.\d+) (.*)$/.exec(line);
        if (m && Number(m[1]) * 1000 >= t0 - 5 && Number(m[1]) * 1000 <= t1 + 5) marks.push([Number(m[1]) * 1000, m[2]]);
    }
    const at = (re) => marks.find(([, what]) => re.test(what))?.[0];
    const steps = [
        ["the quick-pick's answer read", at(/^ext picked$/)],
        ['files saved (debug.saveBeforeStart)', at(/^ext saved$/)],
        ["VS Code's debug start", at(/^ext resolve$/)],
        ['the resolver (the server\'s debug plan)', at(/^ext resolved$/)],
        ['the job session starts', at(/^ext spawn$/)],
        ['the launcher started ahead gets it', at(/^launch run$/)],
        ['rankdebug plans the job and starts torchrun', at(/^launch spawn$/)],
        ['torchrun starts rank 1', at(/^rank 1 boot$/)],
        ["rank 1 gets VS Code's breakpoints", at(/^rank 1 go$/)],
        ['the script runs to the breakpoint', at(/^rank 1 hit$/)],
        ['debugpy loads and connects', at(/^rank 1 connected$/)],
        ["VS Code's configuration replayed, stopped", at(/> event stopped$/)],
        ['VS Code shows it', t1],
    ];
    let last = t0;
    const out = [];
    for (const [name, t] of steps) {
        if (t === undefined) continue;
        out.push(`${name} ${((t - last) / 1000).toFixed(2)} s`);
        last = t;
    }
    // Ours (issue 36): what rankdebug itself adds on the way (the resolver, the launcher, the
    // wait for breakpoints, the replay to debugpy), apart from VS Code, torchrun and the script.
    const span = (a, b) => (a !== undefined && b !== undefined ? Math.max(0, b - a) : 0);
    const ours = [
        ['resolver', span(at(/^ext resolve$/), at(/^ext resolved$/))],
        ['launcher', span(at(/^ext spawn$/), at(/^launch spawn$/))],
        ['breakpoints wait', span(at(/^rank 1 boot$/), at(/^rank 1 go$/))],
        ['replay', span(at(/^rank 1 connected$/), at(/> event stopped$/))],
    ];
    const total = ours.reduce((sum, [, ms]) => sum + ms, 0);
    out.push(`ours ${(total / 1000).toFixed(2)} s (${ours.map(([n, ms]) => `${n} ${(ms / 1000).toFixed(2)}`).join(', ')})`);
    return out.join('; ');
}

/**
 * The floor for "paused": ms until rank 1 of the same job, run plainly (train.sh's torchrun
 * line, no rankdebug), executes the breakpoint line; a copy of train.py prints a mark there
 * (appended to that line, so no line moves).
 */
async function plainReach(ws, bpLine) {
    const lines = fs.readFileSync(path.join(ws, 'train.py'), 'utf8').split('\n');
    // One write per line: two ranks share the pipe, and print() writes its parts apart.
    lines[bpLine - 1] += '; __import__("os").write(1, f"E2E-REACHED {rank}\\n".encode())';
    const copy = path.join(ws, '.plain_train.py');
    fs.writeFileSync(copy, lines.join('\n'));
    const bin = path.dirname(PYTHON);
    const env = { ...process.env, PATH: `${bin}:${process.env.PATH}` };
    const t0 = Date.now();
    const job = spawn(path.join(bin, 'torchrun'), ['--nproc_per_node', '2', copy, '--steps', '50', '--lr', '0.05'], { cwd: ws, env, stdio: ['ignore', 'pipe', 'pipe'] });
    return await new Promise((resolve, reject) => {
        let out = '';
        let ms;
        const timer = setTimeout(() => { job.kill('SIGKILL'); reject(new Error(`the plain run did not reach line ${bpLine}: ${out}`)); }, 120000);
        job.stdout.on('data', (d) => {
            out += d;
            if (ms === undefined && /E2E-REACHED 1\n/.test(out)) {
                clearTimeout(timer);
                ms = Date.now() - t0;
                job.on('exit', () => { fs.rmSync(copy, { force: true }); resolve(ms); });
            }
        });
        job.on('error', (e) => { clearTimeout(timer); reject(e); });
    });
}

export async function scenarioRightClick(page, ws, bpLine) {
    say('opening train.py and setting a breakpoint');
    await openFile(page, 'train.py');
    await setBreakpoint(page, bpLine);
    // An edit left unsaved (at the end: no line moves) is saved before the job starts, as
    // VS Code's debug.saveBeforeStart does (we do it ourselves: suppressSaveBeforeStart).
    const edited = '# edited, not saved, before the run';
    await page.keyboard.press('Control+End');
    await page.keyboard.press('Enter');
    await page.keyboard.type(edited);
    await page.locator('.tab.active.dirty', { hasText: 'train.py' }).waitFor({ timeout: 10000 });

    say('opening train.sh');
    const line = await commandLine(page, 'train.sh', 'torchrun --nproc_per_node');
    await shot(page, '01-train-sh');
    // No click first: the cursor is on line 1 (a comment); the right-click moves it, as for a user.
    const tRight = Date.now();
    await rowMenu(page, line, 'Debug Training Command'); // clicks again if the menu stays open

    say('picking rank 1');
    const row1 = page.locator('.quick-input-list .monaco-list-row', { hasText: 'rank 1 · node 0 · local 1' });
    await row1.waitFor({ timeout: 30000 });
    await shot(page, '02-quick-pick');
    const row0 = page.locator('.quick-input-list .monaco-list-row', { hasText: 'rank 0 · node 0 · local 0' });
    fs.writeFileSync(path.join(ART, 'quick-pick-row.html'), await row1.evaluate((el) => el.outerHTML));
    const checked = (row) =>
        row.evaluate((el) => {
            const box = el.querySelector('input[type=checkbox]');
            if (box) return box.checked;
            const toggle = el.querySelector('[aria-checked]');
            if (toggle) return toggle.getAttribute('aria-checked') === 'true';
            return el.getAttribute('aria-checked') === 'true' || el.getAttribute('aria-selected') === 'true';
        });
    if (await checked(row0)) await row0.click();
    if (!(await checked(row1))) await row1.click();
    if ((await checked(row0)) || !(await checked(row1))) {
        say('row clicks did not toggle; typing the rank instead');
        await page.locator('.quick-input-widget input').fill('1');
    }
    const tEnter = Date.now();
    fs.appendFileSync(TRACE, `${(tEnter / 1000).toFixed(3)} e2e enter\n`);
    await page.keyboard.press('Enter');

    say('waiting for rank 1 to pause at the breakpoint');
    await page.locator('.debug-call-stack .monaco-list-row', { hasText: 'rank 1' }).first().waitFor({ timeout: 120000 });
    await frameRow(page, 'train.py', bpLine).first().waitFor({ timeout: 120000 });
    const pausedMs = Date.now() - tRight;
    const afterPickMs = Date.now() - tEnter;
    say(`rank 1 paused at train.py:${bpLine}, ${pausedMs} ms after the right-click, ${afterPickMs} ms after the quick-pick's answer`);
    say(`where that went: ${phases(tEnter, Date.now())}`);
    const stackText = (await page.locator('.debug-call-stack .monaco-list-row').allInnerTexts()).join(' | ');
    if (/rank 0/.test(stackText)) throw new Error(`rank 0 has a session though only rank 1 was picked: ${stackText}`);
    if (!fs.readFileSync(path.join(ws, 'train.py'), 'utf8').includes(edited)) throw new Error('the unsaved edit of train.py was not saved before the job started');
    say('the unsaved edit of train.py was saved before the job started');

    const locals = page.locator('.debug-variables .monaco-list-row', { hasText: 'Locals' }).first();
    await locals.waitFor();
    if ((await locals.getAttribute('aria-expanded')) === 'false') await locals.click();
    await waitFor('Variables: rank = 1', async () => {
        const rows = await page.locator('.debug-variables .monaco-list-row').allInnerTexts();
        return rows.some((t) => /^\s*rank\s*[:=]?\s*1\s*$/.test(t.replace(/\n/g, ' ')));
    }, 30000);
    say('Variables show rank = 1');

    // RANK from the environment, through the Debug Console.
    const repl = page.locator('.repl-input-wrapper .monaco-editor');
    await repl.waitFor();
    await repl.click();
    await page.keyboard.type('"RANK=" + __import__("os").environ["RANK"]');
    await page.keyboard.press('Enter');
    await page.locator('.repl .monaco-list-row', { hasText: "'RANK=1'" }).first().waitFor({ timeout: 30000 });
    say("Debug Console: 'RANK=1'");
    await shot(page, '03-rank1-paused');

    say('stopping');
    const tStop = Date.now();
    await stopDebugging(page);
    const left = await waitFor('the job to end', () => {
        const procs = jobProcesses(ws);
        return procs.length === 0 ? 'none' : false;
    }, 20000).catch(() => jobProcesses(ws));
    if (left !== 'none') throw new Error(`processes left after stop: ${left.join('; ')}`);
    say(`stopped; no process left (${Date.now() - tStop} ms)`);
    await shot(page, '04-stopped');
    const plainMs = await plainReach(ws, bpLine);
    say(`plain run of the same job: rank 1 reached train.py:${bpLine} in ${plainMs} ms; paused ÷ plain = ${(afterPickMs / plainMs).toFixed(2)}`);
    return { pausedMs, afterPickMs, plainMs };
}
