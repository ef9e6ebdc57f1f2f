// End-to-end suite on a real VS Code: code-server (from npm) driven by Playwright in Debian's
// Chromium (shared/e2e-real-vscode.md). Installs dist/rankdebug.vsix, opens a workspace with
// examples/train.sh + train.py, and checks through the UI:
//   1. right-click the torchrun line → Debug Training Command → pick rank 1 → Call Stack shows
//      `rank 1` paused at the breakpoint line, Variables show rank = 1, the Debug Console
//      evaluates RANK to '1'; stop → no process of the job is left;
//   2. a job started with `rankdebug launch` outside VS Code appears in Training Jobs; Attach
//      → `rank 0` paused at the breakpoint; stop;
//   3. a plain `torchrun` job (no rankdebug) started outside VS Code appears in Training Jobs
//      with its two ranks; Show Stacks → the webview shows the ranks' column(s); a frame
//      click opens the file; Attach on `rank 1` (debugpy injected) → paused at a breakpoint;
//   4. an armed job (`rankdebug launch --arm`): Evaluate in Rank on rank 1 → the
//      `Rank Debugger: Eval` channel shows `rank 1 › rank * 10 + 7 = 17`;
//   5. an armed job started from the editor: right-click the torchrun line of long.sh →
//      *No rank now — arm every rank* → the job runs with no rank session, Training Jobs shows
//      it armed → Attach on rank 1 (clicked twice) → exactly one `rank 1` under the job's
//      session, stopped at a breakpoint → stop → no process left;
//   6. ranks together: right-click the torchrun line of together.sh → ranks 0,1 → rank 0 stops at a
//      breakpoint only it reaches; the Call Stack shows rank 0 paused on it and rank 1 paused
//      too, waiting in all_reduce (frames read from outside); Training Jobs shows both ranks'
//      live state (docs/ranks-view.png with RANKDEBUG_E2E_DOCS=1) → Step Over All Ranks → rank 0
//      on the next line (step), reported with rank 1 waiting in all_reduce → Bind Breakpoint to
//      Ranks… `1` on a line both ranks pass (the Breakpoints view shows the condition) →
//      Continue All Ranks → rank 1 alone stops there, rank 0 paused with it → the breakpoint
//      off → Continue All Ranks → both running → stop → no process left;
//   7. more of it: right-click together2.sh → ranks 0,1, no breakpoint (rank 1 2 s late to its loop)
//      → Run Chosen Ranks to Cursor → both paused at the line, no breakpoint left there →
//      Continue All Ranks → both run on → rank 1 raises (uncaught, 3 s collective timeout) →
//      paused on the exception, rank 0 paused with it → 6 s on, still paused, alive; the Debug
//      Console evaluates rank 1's `loss` → stop → no process left;
//   8. compare across ranks: right-click compare.sh → `0 arm` (4 ranks, rank 0 debugged, all armed)
//      → rank 0 at a breakpoint in main() → Show Stacks on the job: the merged tree branches, rank 0
//      at the breakpoint (odd), ranks 1-3 in all_reduce (docs/stack-tree.png with
//      RANKDEBUG_E2E_DOCS=1) → Variables: weight → Compare Across Ranks → the panel
//      groups ranks 0,1,3 and 2 (rank 2 highlighted, element 1234 [19, 18] named; click → groups
//      timed; docs/compare-panel.png with RANKDEBUG_E2E_DOCS=1) → Make a group of rank 2 → grad
//      typed in the Debug Console → Compare Across Ranks… offers it → rank 1's NaN counted in red
//      → tolerance 1e-2 on weight → one group → stop → no process left;
//   9. smoke run: a breakpoint in smoke_train.py → the Smoke run lens on smoke.sh → the diff (left: the
//      command as written, 5000 iterations; right: the smoke command; docs/smoke-diff.png with
//      RANKDEBUG_E2E_DOCS=1), smoke.sh unchanged → Debug → rank 1 → paused at the breakpoint → stop;
//  10. Ray: a breakpoint in ray_worker.py (a Ray actor's method) → right-click ray.sh (a driver
//      whose rank count is not known: the input box) → `1,2` → both actor ranks paused in the
//      Call Stack, no other rank with a session → stop → no process of the job left (raylet and
//      GCS included); each actor rank's session is labelled with its role (`rank 1 · actor/rollout/ref`);
//  13. why stuck (whyStuck.mjs): a job that deadlocks → the hang notification → Why Is This Job Stuck?
//      → the panel names rank 3 → Debug culprit, Debug one per class → stop;
//  14. session cap (sessionCap.mjs): rankdebug.maxSessions 2, right-click cap.sh → `0-3` → two rank
//      sessions, ranks 2,3 paused without one (Training Jobs) → Open Session (past the cap while all
//      are stopped; in place of the least recently used running session) → stop;
//  15. coordinates (coords.mjs): right-click a 1,024-rank Megatron command → the quick-pick shows
//      the layout and `rank 13 · node 1 · pp 0 · dp 1 · tp 5`, `tp 5` filters, a typed selector is
//      read; an armed 4-rank job on a dp 2 × tp 2 DeviceMesh → Training Jobs rows show their
//      coordinates → Group Ranks by… tp → `tp 0`, `tp 1` → No grouping;
//  16. per class (perClass.mjs): a plain torchrun that deadlocks, found running → Training Jobs'
//      watch → the hang notification names rank 3 → Show Stacks → Debug this class on ranks 0-2
//      (`rank 0 · 2 like it`) → Debug one rank per class (`rank 3` too) → the watcher ends with the job;
//  12. multinode (multinode.mjs): VS Code on node 0 of a two-node namespace cluster, right-click a
//      2 × 2 torchrun (rankdebug.hosts: node1) → `1,3` → rank 1 (node 0) and rank 3 (node 1, through
//      SSH) paused in the Call Stack → stop → nothing left on either node;
//  11. scale: the quick-pick of a 128 × 8 torchrun line (1,024 ranks, node separators, filtering as
//      you type) and a 256-rank armed job in Training Jobs (grouped rows), with screenshots;
//   then the terminal `rankdebug` command, the failed-command offer, launch.json, code lens.
// Screenshots and logs go to .artifacts/e2e/. Env: RANKDEBUG_E2E_PYTHON (default .venv/bin/python);
// RANKDEBUG_E2E_DOCS=1 refreshes the README's pictures under docs/ (or a list of their names:
// RANKDEBUG_E2E_DOCS=stack-tree,compare-panel).
import { execFileSync, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { parse as parseJsonc } from 'jsonc-parser';
import { chromium } from 'playwright-core';
import { codeServerSetup } from './codeServer.mjs';
import { scenarioCompareRoutes } from './compareRoutes.mjs';
import { scenarioMultinode } from './multinode.mjs';
import { scenarioCoords } from './coords.mjs';
import { scenarioPerClass } from './perClass.mjs';
import { scenarioSessionCap } from './sessionCap.mjs';
import { scenarioStartedRanks } from './startedRanks.mjs';
import { scenarioWhyStuck } from './whyStuck.mjs';

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../../..');
const ART = path.join(ROOT, '.artifacts', 'e2e');
// Every process of a job VS Code starts marks its phases here (rankdebug.runtime.marks).
const TRACE = path.join(ART, 'trace.log');
const VSIX = path.join(ROOT, 'dist', 'rankdebug.vsix');
const PYTHON = process.env.RANKDEBUG_E2E_PYTHON ?? path.join(ROOT, '.venv', 'bin', 'python');
const T0 = Date.now();
const results = [];

function say(msg) {
    console.log(`[e2e ${((Date.now() - T0) / 1000).toFixed(1)}s] ${msg}`);
}

function freePort() {
    return new Promise((resolve, reject) => {
        const srv = net.createServer();
        srv.listen(0, '127.0.0.1', () => {
            const { port } = srv.address();
            srv.close(() => resolve(port));
        });
        srv.on('error', reject);
    });
}

/** A private XDG_RUNTIME_DIR: the job registry of this run, apart from other jobs on the machine. */
function runtimeDir(base) {
    const dir = path.join(base, 'run');
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    return dir;
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Whether this run refreshes the README's picture docs/NAME.png (RANKDEBUG_E2E_DOCS=1, or a list of names). */
function docs(name) {
    const want = process.env.RANKDEBUG_E2E_DOCS ?? '';
    return want === '1' || want.split(',').includes(name);
}

/** `keep({ pid, cmd, env, cwd, zombie })`'s `pid cmd` line for each process it keeps. */
function processes(keep) {
    const out = [];
    for (const pid of fs.readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
        try {
            const cmd = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
            const zombie = /\) [ZX] /.test(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'));
            const env = fs.readFileSync(`/proc/${pid}/environ`, 'utf8');
            const cwd = fs.readlinkSync(`/proc/${pid}/cwd`);
            if (keep({ pid, cmd, env, cwd, zombie })) out.push(`${pid} ${cmd.slice(0, 160)}`);
        } catch {
            // gone, or not ours
        }
    }
    return out;
}

/** Processes of rankdebug jobs started under `dir`: RANKDEBUG_JOB in their environment, or `rankdebug_main.py launch`. */
function jobProcesses(dir) {
    return processes(({ cmd, env, cwd }) => {
        const isJob = env.includes('RANKDEBUG_JOB=') || (cmd.includes('rankdebug') && / launch /.test(cmd)) || cmd.includes('long_train.py');
        return isJob && cwd.startsWith(dir);
    });
}

async function waitFor(what, fn, timeoutMs = 60000, every = 250) {
    const end = Date.now() + timeoutMs;
    let last;
    while (Date.now() < end) {
        try {
            last = await fn();
            if (last) return last;
        } catch (e) {
            last = e;
        }
        await sleep(every);
    }
    throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last instanceof Error ? `: ${last.message}` : ''}`);
}

function provision() {
    const line = execFileSync('bash', [path.join(ROOT, 'tests/extension/e2e/provision.sh')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] })
        .trim()
        .split('\n')
        .pop();
    const m = /CODE_SERVER=(\S+) NODE24=(\S+)/.exec(line ?? '');
    if (!m) throw new Error(`provision.sh said: ${line}`);
    return { codeServer: m[1], node24: m[2] };
}

function makeWorkspace(base) {
    const ws = path.join(base, 'workspace');
    fs.mkdirSync(ws, { recursive: true });
    for (const f of ['train.sh', 'train.py']) fs.copyFileSync(path.join(ROOT, 'examples', f), path.join(ws, f));
    fs.copyFileSync(path.join(ROOT, 'tests/extension/e2e/long_train.py'), path.join(ws, 'long_train.py'));
    fs.copyFileSync(path.join(ROOT, 'tests/extension/e2e/long.sh'), path.join(ws, 'long.sh'));
    for (const f of ['together_train.py', 'together.sh', 'together2_train.py', 'together2.sh', 'compare_train.py', 'compare.sh', 'smoke_train.py', 'smoke.sh', 'ray.sh', 'big.sh', 'stuck_train.py', 'stuck.sh', 'cap_train.py', 'cap.sh', 'megatron.sh', 'pretrain_gpt.py', 'started.sh', 'started_train.py']) fs.copyFileSync(path.join(ROOT, 'tests/extension/e2e', f), path.join(ws, f));
    for (const f of ['ray_trainer.py', 'ray_worker.py']) fs.copyFileSync(path.join(ROOT, 'tests/launch/scripts', f), path.join(ws, f));
    fs.copyFileSync(path.join(ROOT, 'tests/extension/e2e/smoke_configurator.py'), path.join(ws, 'configurator.py'));
    // Watched from the start: a scenario's setting written later (whystuck) is seen at once.
    fs.mkdirSync(path.join(ws, '.vscode'), { recursive: true });
    fs.writeFileSync(path.join(ws, '.vscode', 'settings.json'), '{}\n');
    const py = fs.readFileSync(path.join(ws, 'train.py'), 'utf8').split('\n');
    const bpLine = py.findIndex((l) => l.includes('torch.manual_seed(rank)')) + 1;
    const sh = fs.readFileSync(path.join(ws, 'train.sh'), 'utf8').split('\n');
    const cmdLine = sh.findIndex((l) => /^\s*torchrun\b/.test(l)) + 1;
    if (bpLine < 1 || cmdLine < 1) throw new Error('examples/train.py or train.sh changed: update the e2e suite');
    return { ws, bpLine, cmdLine };
}

async function startCodeServer(cs, node24, base, ws) {
    const port = await freePort();
    const { dirs, env, node, install, serve } = codeServerSetup({ codeServer: cs, node24, base, port, python: PYTHON });
    say('installing the .vsix');
    execFileSync(node, install(VSIX), { env, stdio: ['ignore', 'pipe', 'pipe'] });
    const logFile = fs.openSync(path.join(ART, 'code-server.log'), 'w');
    const proc = spawn(node, serve(ws), { env, cwd: base, detached: true, stdio: ['ignore', logFile, logFile] });
    await waitFor('code-server /healthz', async () => (await fetch(`http://127.0.0.1:${port}/healthz`)).ok, 60000, 300);
    say(`code-server on port ${port}`);
    return { port, proc, dirs };
}

function stopGroup(proc) {
    if (!proc?.pid) return;
    try {
        process.kill(-proc.pid, 'SIGTERM');
    } catch {
        // already gone
    }
}

async function shot(page, name) {
    await page.screenshot({ path: path.join(ART, `${name}.png`) }).catch(() => undefined);
}

async function palette(page, text) {
    await page.keyboard.press('F1');
    const input = page.locator('.quick-input-widget input');
    await input.waitFor({ state: 'visible' });
    await input.fill(`>${text}`);
    await page.locator('.quick-input-list .monaco-list-row', { hasText: text.split(': ').pop() }).first().waitFor();
    await page.keyboard.press('Enter');
}

async function openFile(page, name) {
    await page.keyboard.press('Control+P');
    const input = page.locator('.quick-input-widget input');
    await input.waitFor({ state: 'visible' });
    await input.fill(name);
    // Click the row of that very file: Enter takes the top row, which recency may make
    // another (train.py over train.sh).
    const row = page.locator('.quick-input-list .monaco-list-row', { hasText: name }).first();
    await row.waitFor();
    await row.click();
    await page.locator('.tab.active', { hasText: name }).waitFor();
}

/** Its tab when it has one (earlier scenarios may have closed it), else Quick Open. */
async function showFile(page, name) {
    const tab = page.locator('.tabs-container .tab', { hasText: name }).first();
    if (await tab.count()) {
        await tab.click();
        await page.locator('.tab.active', { hasText: name }).waitFor();
    } else {
        await openFile(page, name);
    }
}

async function goToLine(page, line) {
    const input = page.locator('.quick-input-widget input');
    // Right after a debug session ends the workbench may take focus back and close (or
    // leave inert) a quick input that just opened: open it again then.
    for (let attempt = 1; ; attempt++) {
        await page.keyboard.press('Control+G');
        try {
            await input.waitFor({ state: 'visible', timeout: 10000 });
            await input.fill(`:${line}`, { timeout: 10000 });
            await page.locator('.quick-input-list .monaco-list-row', { hasText: `line ${line}` }).first().waitFor({ timeout: 10000 });
            break;
        } catch (e) {
            if (attempt === 3) throw e;
            await page.keyboard.press('Escape');
        }
    }
    await page.keyboard.press('Enter');
    await page.locator('.quick-input-widget').waitFor({ state: 'hidden' });
    await waitFor(`the cursor on line ${line}`, async () => (await page.locator('.statusbar-item', { hasText: `Ln ${line},` }).count()) > 0, 15000);
}

/** Clicks Stop (or Disconnect) on the debug toolbar; waits until the Call Stack has no rank left. */
/** A breakpoint on `line` of the active editor, set as a user does (the line, then F9). */
async function setBreakpoint(page, line) {
    await goToLine(page, line);
    await page.locator('.monaco-editor.focused').waitFor();
    await page.keyboard.press('F9');
    await page.locator('.monaco-editor .codicon-debug-breakpoint').first().waitFor({ timeout: 15000 });
}

/** The line of `file` that holds `text`, once the language server's code lens is above it. */
async function commandLine(page, file, text) {
    await openFile(page, file);
    const line = page.locator('.monaco-editor .view-line', { hasText: text }).first();
    await line.waitFor();
    await page.locator('.monaco-editor .codelens-decoration', { hasText: 'Debug' }).first().waitFor({ timeout: 90000 });
    return line;
}

async function stopDebugging(page) {
    await page.locator('.debug-toolbar .codicon-debug-stop, .debug-toolbar .codicon-debug-disconnect').first().click();
    await waitFor('every debug session to end', async () => (await page.locator('.debug-call-stack .monaco-list-row', { hasText: /rank \d/ }).count()) === 0, 30000);
}

/** The call stack row for a paused frame at `file:line`. */
function frameRow(page, file, line) {
    return page.locator('.debug-call-stack .monaco-list-row', { hasText: new RegExp(`${file.replace('.', '\\.')}\\s*${line}:`) });
}

/**
 * Expands the Call Stack's collapsed MainThread rows: a chosen rank also serves rankdebug's
 * handler thread, which debugpy lists, and VS Code then leaves the stopped thread collapsed.
 */
async function expandMainThreads(page) {
    const rows = page.locator('.debug-call-stack .monaco-list-row[aria-expanded="false"]', { hasText: /^\s*MainThread/ });
    for (let i = await rows.count(); i > 0; i--) await rows.first().locator('.monaco-tl-twistie').click({ timeout: 1000 }).catch(() => undefined);
}

async function scenarioRightClick(page, ws, bpLine) {
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

async function scenarioJobsView(page, ws, bpLine, cmdLine) {
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

/** The Training Jobs pane, and a row in it. */
function jobsPane(page) {
    return page.locator('.pane', { has: page.locator('.pane-header', { hasText: 'Training Jobs' }) });
}

function jobsHeader(page) {
    return page.locator('.pane-header', { hasText: 'Training Jobs' });
}

async function openJobsView(page) {
    const header = jobsHeader(page);
    await header.waitFor({ timeout: 15000 });
    if ((await header.getAttribute('aria-expanded')) === 'false') await header.click();
}

/** Right-click a tree row and pick a menu item; again if a refresh re-rendered the row meanwhile. */
/** Clicks `name` in the open context menu, again when the menu swallowed the click (it stays open); the time of the click. */
async function pickMenuItem(page, name) {
    const item = page.getByRole('menuitem', { name });
    await item.waitFor({ timeout: 5000 });
    await item.click({ timeout: 5000 });
    const t = Date.now();
    await sleep(300);
    if (await item.isVisible()) await item.click({ timeout: 2000 }).catch(() => undefined);
    return t;
}

async function rowMenu(page, row, name) {
    for (let i = 0; i < 3; i++) {
        await row.click({ button: 'right' });
        try {
            return await pickMenuItem(page, name);
        } catch (e) {
            say(`menu item ${name}: ${e instanceof Error ? e.message.split('\n')[0] : e}; again`);
            await page.keyboard.press('Escape');
        }
    }
    throw new Error(`could not pick ${name} from the context menu`);
}

/** The Show Stacks webview's document (code-server nests it: iframe.webview → #active-frame). */
function stacksFrame(page) {
    return page.frameLocator('iframe.webview').last().frameLocator('#active-frame');
}

/** rank → pid of the ranks a launcher started (its children with RANK in their environment). */
function rankPids(launcher) {
    const out = {};
    for (const pid of fs.readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
        try {
            const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
            const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
            if (ppid !== launcher) continue;
            const rank = /(?:^|\0)RANK=(\d+)\0/.exec(fs.readFileSync(`/proc/${pid}/environ`, 'utf8'))?.[1];
            if (rank !== undefined) out[rank] = Number(pid);
        } catch {
            // gone
        }
    }
    return out;
}

async function scenarioForeignJob(page, ws) {
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

/** An armed job (`rankdebug launch --arm`): Evaluate in Rank on rank 1 → the Eval output channel shows the value. */
async function scenarioArmedEval(page, ws) {
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

/** The Call Stack rows that are the session `rank N` (not its threads or frames). */
async function rankSessionRows(page, rank) {
    const rows = await page.locator('.debug-call-stack .monaco-list-row').evaluateAll((els) => els.map((el) => ({ text: el.innerText, level: Number(el.getAttribute('aria-level') ?? 0) })));
    return rows.filter((r) => new RegExp(`^\\s*rank ${rank}(?!\\d)`).test(r.text));
}

/**
 * An armed job started from the editor: right-click the torchrun line of long.sh → *No rank
 * now — arm every rank* → no rank session, Training Jobs shows the job armed → Attach on
 * rank 1 (twice) → one `rank 1` under the job's session, at a breakpoint → stop → nothing left.
 */
async function scenarioArmedFromEditor(page, ws) {
    const timings = {};
    say('armed from the editor: a breakpoint in long_train.py, then right-click long.sh');
    // Earlier scenarios leave a Stacks panel and side editors: a narrow group would put the
    // overview ruler over the line to right-click.
    await palette(page, 'View: Close All Editor Groups');
    await openFile(page, 'long_train.py');
    const py = fs.readFileSync(path.join(ws, 'long_train.py'), 'utf8').split('\n');
    const bp = py.findIndex((l) => l.includes('the e2e breakpoint')) + 1;
    await setBreakpoint(page, bp);

    const line = await commandLine(page, 'long.sh', 'torchrun --nproc_per_node 2 long_train.py');
    await rowMenu(page, line, 'Debug Training Command'); // clicks again if the menu stays open
    const armRow = page.locator('.quick-input-list .monaco-list-row', { hasText: 'No rank now — arm every rank' });
    await armRow.waitFor({ timeout: 30000 });
    await armRow.click();
    await shot(page, '16-arm-pick');
    const checkedRows = await page.locator('.quick-input-list .monaco-list-row').evaluateAll((els) =>
        els.filter((el) => el.querySelector('input[type=checkbox]')?.checked || el.getAttribute('aria-checked') === 'true').map((el) => el.innerText.replace(/\s+/g, ' ')),
    );
    if (checkedRows.length !== 1 || !/Arm every rank/.test(checkedRows[0])) {
        say(`checked after the click: ${JSON.stringify(checkedRows)}; typing "arm" instead`);
        await page.locator('.quick-input-widget input').fill('arm');
    }
    const tStart = Date.now();
    await page.keyboard.press('Enter');

    say('the job runs armed: waiting for Training Jobs to list it');
    await page.locator('.debug-toolbar').waitFor({ timeout: 60000 });
    await palette(page, 'View: Show Run and Debug');
    await openJobsView(page);
    const pane = jobsPane(page);
    const jobRow = pane.locator('.monaco-list-row', { hasText: /torchrun · \d{8}-\d{6}-\d+/ }).first();
    await waitFor('the armed job in Training Jobs', async () => {
        if (!(await jobRow.count())) await palette(page, 'Rank Debugger: Refresh Training Jobs');
        return /armed/.test(await jobRow.innerText());
    }, 120000, 2000);
    const rankRow = pane.locator('.monaco-list-row', { hasText: /rank 1(?!\d)[\s\S]*armed/ }).first();
    await waitFor('rank 1 armed', async () => {
        if (await rankRow.count()) return true;
        await palette(page, 'Rank Debugger: Refresh Training Jobs');
        return false;
    }, 120000, 2000);
    timings.armedMs = Date.now() - tStart;
    say(`Training Jobs: ${(await jobRow.innerText()).replace(/\s+/g, ' ')}; rank 1 armed (${timings.armedMs} ms after Enter)`);
    const early = await rankSessionRows(page, '\\d+');
    if (early.length) throw new Error(`a rank session exists before any attach: ${JSON.stringify(early)}`);
    await shot(page, '17-armed-from-editor');

    say('Attach on rank 1, clicked twice');
    await rankRow.hover();
    const inline = rankRow.locator('.action-label[aria-label^="Attach to Ranks"]').first();
    let tAttach;
    if (await inline.isVisible().catch(() => false)) {
        tAttach = Date.now();
        await inline.click();
        await inline.click({ timeout: 2000 }).catch(() => say('the second click found no Attach button (the row changed)'));
    } else {
        tAttach = await rowMenu(page, rankRow, 'Attach to Ranks');
        await rankRow.click({ button: 'right' });
        const again = page.getByRole('menuitem', { name: 'Attach to Ranks' });
        if (await again.isVisible({ timeout: 2000 }).catch(() => false)) await again.click();
        else await page.keyboard.press('Escape');
    }
    await page.locator('.debug-call-stack .monaco-list-row', { hasText: 'rank 1' }).first().waitFor({ timeout: 90000 });
    await frameRow(page, 'long_train.py', bp).first().waitFor({ timeout: 60000 });
    timings.attachMs = Date.now() - tAttach;
    say(`rank 1 stopped at long_train.py:${bp}, ${timings.attachMs} ms after Attach`);
    await sleep(3000); // time for a second session, were one to start
    const sessions = await rankSessionRows(page, 1);
    if (sessions.length !== 1) throw new Error(`expected exactly one rank 1 session, found ${sessions.length}: ${JSON.stringify(sessions)}`);
    const parent = await page.locator('.debug-call-stack .monaco-list-row', { hasText: 'long_train.py · armed' }).first().evaluate((el) => Number(el.getAttribute('aria-level') ?? 0)).catch(() => -1);
    if (parent < 1 || sessions[0].level <= parent) throw new Error(`rank 1 (level ${sessions[0].level}) is not under the job's session (level ${parent})`);
    const others = await rankSessionRows(page, '(?!1(?!\\d))\\d+');
    if (others.length) throw new Error(`other ranks got sessions: ${JSON.stringify(others)}`);
    await pane.locator('.monaco-list-row', { hasText: /rank 1(?!\d)[\s\S]*paused/ }).first().waitFor({ timeout: 15000 });
    say('exactly one rank 1 session, under the job\'s session; Training Jobs shows it paused');
    await shot(page, '18-armed-attached');

    say('stopping the armed job');
    const tStop = Date.now();
    await stopDebugging(page);
    await waitFor('the toolbar to go', async () => !(await page.locator('.debug-toolbar').isVisible()), 30000).catch(() => undefined);
    const left = await waitFor('the armed job to end', () => (jobProcesses(ws).length ? false : 'none'), 20000).catch(() => jobProcesses(ws));
    if (left !== 'none') throw new Error(`processes left after stop: ${left.join('; ')}`);
    say(`stopped; no process left (${Date.now() - tStop} ms)`);
    // The breakpoint off again for the scenarios after this one.
    await page.locator('.tabs-container .tab', { hasText: 'long_train.py' }).first().click();
    await goToLine(page, bp);
    await page.keyboard.press('F9');
    return timings;
}

/** The Call Stack rows under each rank session (its own row, its threads and frames): rank → texts. */
/** Live processes carrying a job id whose command line matches `re`, wherever their cwd is. */
function jobProcessesNamed(re) {
    return processes(({ cmd, env, zombie }) => !zombie && re.test(cmd) && env.includes('RANKDEBUG_JOB='));
}

/**
 * A Ray driver (ray.sh): its rank count is not known, so the editor asks for ranks as text;
 * `1,2` → both actor ranks paused at a breakpoint in the actor's code, each a `rank N`
 * session labelled with its role (`rank 1 · actor/rollout/ref`) → stop → nothing of the job left, the Ray cluster it started included.
 */
async function scenarioRay(page, ws) {
    say('ray: a breakpoint in the actor\'s code, then right-click ray.sh');
    const py = fs.readFileSync(path.join(ws, 'ray_worker.py'), 'utf8').split('\n');
    const bp = py.findIndex((l) => l.includes('# BREAK')) + 1;
    await openFile(page, 'ray_worker.py');
    await setBreakpoint(page, bp);
    const line = await commandLine(page, 'ray.sh', 'python ray_trainer.py');
    await rowMenu(page, line, 'Debug Training Command');
    const input = page.locator('.quick-input-widget input');
    await page.locator('.quick-input-widget', { hasText: 'not known here' }).waitFor({ timeout: 30000 });
    await input.fill('1,2');
    const tEnter = Date.now();
    await page.keyboard.press('Enter');
    let stacks;
    await waitFor('ranks 1 and 2 paused in the Call Stack', async () => {
        stacks = await rankSubtrees(page);
        return /Paused/i.test(stacks[1] ?? '') && /Paused/i.test(stacks[2] ?? '');
    }, 180000).catch((e) => {
        throw new Error(`${e.message}; Call Stack: ${JSON.stringify(stacks)}`);
    });
    const pausedMs = Date.now() - tEnter;
    if (stacks[0] !== undefined || stacks[3] !== undefined) throw new Error(`only ranks 1 and 2 were picked: ${JSON.stringify(stacks)}`);
    const cluster = jobProcessesNamed(/raylet|gcs_server/);
    if (!cluster.length) throw new Error('the job\'s Ray cluster (raylet, GCS) is not running under the job');
    say(`ranks 1 and 2 paused ${pausedMs} ms after the answer: ${JSON.stringify(stacks)}`);
    // Each actor rank's session is labelled with its role (the actor's class, as verl names it).
    await waitFor('ranks 1 and 2 labelled with their actor role', async () => {
        const rows = await page.locator('.debug-call-stack .monaco-list-row').allInnerTexts();
        return [1, 2].every((r) => rows.some((t) => t.replace(/\s+/g, ' ').includes(`rank ${r} · actor/rollout/ref`)));
    }, 20000);
    await shot(page, '30-ray-paused');
    say('stopping');
    await stopDebugging(page);
    const left = await waitFor('nothing of the Ray job left', () => {
        const procs = [...jobProcesses(ws), ...jobProcessesNamed(/raylet|gcs_server|default_worker|ray_trainer/)];
        return procs.length === 0 ? 'none' : false;
    }, 30000).catch(() => [...jobProcesses(ws), ...jobProcessesNamed(/raylet|gcs_server|default_worker|ray_trainer/)]);
    if (left !== 'none') throw new Error(`processes left after stop: ${left.join('; ')}`);
    return { pausedMs };
}

/**
 * Hundreds of ranks: the quick-pick of a 128-node × 8 command (1,024 ranks) opens with node
 * separators and filters as you type; Training Jobs shows a 256-rank armed job (lightweight
 * ranks, benchmarks/scale.py --hold) in a few grouped rows. Screenshots: 40-scale-quickpick,
 * 41-scale-quickpick-filtered, 42-scale-jobs.
 */
async function scenarioScale(page, ws) {
    say('scale: the quick-pick of a 1,024-rank command');
    const line = await commandLine(page, 'big.sh', 'torchrun --nnodes 128');
    const tMenu = Date.now();
    await rowMenu(page, line, 'Debug Training Command');
    const rows = page.locator('.quick-input-list .monaco-list-row');
    await rows.filter({ hasText: 'rank 0 · node 0 · local 0' }).first().waitFor({ timeout: 30000 });
    const pickMs = Date.now() - tMenu;
    const listText = (await page.locator('.quick-input-list').innerText()).replace(/\s+/g, ' ');
    if (!/node 1 · 8-15/.test(listText)) throw new Error(`no node separator (node 1 · 8-15) in the quick-pick: ${listText.slice(0, 400)}`);
    await shot(page, '40-scale-quickpick');
    const tType = Date.now();
    await page.locator('.quick-input-widget input').fill('rank 1000');
    await rows.filter({ hasText: 'rank 1000 · node 125 · local 0' }).first().waitFor({ timeout: 10000 });
    const filterMs = Date.now() - tType;
    const shown = await rows.allInnerTexts();
    if (shown.some((t) => /rank 0 · node 0/.test(t))) throw new Error(`the filter left rank 0 shown: ${JSON.stringify(shown.slice(0, 5))}`);
    await shot(page, '41-scale-quickpick-filtered');
    await page.keyboard.press('Escape');

    // RANKDEBUG_E2E_SCALE_RANKS=1024 measures the view at a thousand ranks (not in CI: the
    // job alone takes minutes to start on 2 cores).
    const nRanks = Number(process.env.RANKDEBUG_E2E_SCALE_RANKS ?? 256);
    say(`scale: a ${nRanks}-rank armed job in Training Jobs`);
    // Training Jobs collapsed (not visible: no refresh) while the job starts, so that opening
    // it is what lists the job: the time from that click to the job's groups is the refresh.
    await palette(page, 'View: Show Run and Debug');
    const header = jobsHeader(page);
    await header.waitFor({ timeout: 15000 });
    if ((await header.getAttribute('aria-expanded')) === 'true') await header.click();
    const env = { ...process.env, XDG_RUNTIME_DIR: runtimeDir(path.dirname(ws)), PATH: `${path.dirname(PYTHON)}:${process.env.PATH}` };
    const hold = spawn(PYTHON, [path.join(ROOT, 'benchmarks/scale.py'), '--hold', '--ranks', String(nRanks), '--per-node', '8', '--no-foreign', '--others', '0'], {
        cwd: ws, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true,
    });
    let out = '';
    const log = fs.createWriteStream(path.join(ART, 'scale-hold.log'));
    hold.stdout.on('data', (d) => { out += d; log.write(d); });
    hold.stderr.on('data', (d) => log.write(d));
    let viewMs = 0;
    let rowMs = 0;
    let refreshMs = -1;
    try {
        await waitFor(`${nRanks} armed ranks running`, () => out.includes('holding:'), 240000 * Math.max(1, nRanks / 256));
        const jobId = /armed job (\S+),/.exec(out)?.[1];
        if (!jobId) throw new Error(`no job id in: ${out}`);
        if (await jobsPane(page).locator('.monaco-list-row', { hasText: jobId }).count()) throw new Error('the job was listed before Training Jobs was opened');
        const tRefresh = Date.now();
        await openJobsView(page);
        const jobRow = jobsPane(page).locator('.monaco-list-row', { hasText: jobId }).first();
        await jobRow.waitFor({ timeout: 30000 });
        rowMs = Date.now() - tRefresh;
        if ((await jobRow.getAttribute('aria-expanded')) === 'false') await jobRow.click();
        // The ranks collapse into groups (per host on a real cluster; here one host, by state
        // and ranges): a group row stands for many ranks, and no level shows hundreds of rows.
        const group = jobsPane(page).locator('.monaco-list-row', { hasText: /ranks 0-\d+/ }).first();
        await group.waitFor({ timeout: 30000 });
        viewMs = Date.now() - tRefresh;
        await shot(page, '42-scale-jobs');
        const count = await jobsPane(page).locator('.monaco-list-row').count();
        if (count > 60) throw new Error(`Training Jobs drew ${count} rows for one ${nRanks}-rank job`);
        const marks = fs.existsSync(TRACE) ? fs.readFileSync(TRACE, 'utf8').split('\n').map((l) => /^(\d+\.\d+) ext (jobs .*)$/.exec(l)).filter((m) => m && Number(m[1]) * 1000 >= tRefresh - 50) : [];
        say(`Training Jobs after the click: ${marks.map((m) => `+${Math.round(Number(m[1]) * 1000 - tRefresh)} ms ${m[2]}`).join('; ') || 'no marks'}`);
        // Ours: from the refresh to the last row VS Code asked the extension for; the rest is
        // VS Code drawing the pane it opens (~2 s in code-server here whatever the ranks: 8 too).
        const at = (re) => marks.filter((m) => re.test(m[2])).map((m) => Number(m[1]) * 1000);
        const [start] = at(/^jobs refresh/);
        const end = Math.max(...at(/^jobs view (item|asked)/));
        refreshMs = start !== undefined && Number.isFinite(end) ? Math.round(end - start) : -1;
        say(`Training Jobs opened: the ${nRanks}-rank job listed ${rowMs} ms after the click, its ${count} rows (ranks grouped) ${viewMs} ms after, its row expanded: ${(await group.innerText()).replace(/\s+/g, ' ')}`);
    } finally {
        try { process.kill(-hold.pid, 'SIGTERM'); } catch { /* gone */ }
        await waitFor(`the ${nRanks}-rank job to end`, () => hold.exitCode !== null || hold.signalCode !== null, 60000).catch(() => undefined);
    }
    return { pickMs, filterMs, rowMs, viewMs, refreshMs, nRanks };
}

async function rankSubtrees(page) {
    const rows = await page.locator('.debug-call-stack .monaco-list-row').evaluateAll((els) => els.map((el) => ({ text: el.innerText.replace(/\s+/g, ' ').trim(), level: Number(el.getAttribute('aria-level') ?? 0) })));
    const out = {};
    for (let i = 0; i < rows.length; i++) {
        const m = /^rank (\d+)(?!\d)/.exec(rows[i].text);
        if (!m) continue;
        const texts = [rows[i].text];
        for (let j = i + 1; j < rows.length && rows[j].level > rows[i].level; j++) texts.push(rows[j].text);
        out[m[1]] = texts.join(' | ');
    }
    return out;
}

/** Drags the side bar's edge so that it is `width` px wide; answers the width it had. */
async function sideBarWidth(page, width) {
    const box = await page.locator('.part.sidebar').boundingBox();
    if (!box || Math.abs(box.width - width) < 2) return box?.width ?? width;
    const y = box.y + box.height / 2;
    await page.mouse.move(box.x + box.width + 1, y);
    await page.mouse.down();
    await page.mouse.move(box.x + (box.width + width) / 2, y, { steps: 4 });
    await page.mouse.move(box.x + width + 1, y, { steps: 4 });
    await page.mouse.up();
    await sleep(300);
    return box.width;
}

/** Whether the active editor's glyph margin has a `cls` icon (a codicon class) on `line`. */
async function glyphOnLine(page, cls, line) {
    const editor = page.locator('.editor-group-container.active .monaco-editor').first();
    if (!(await editor.count())) return false;
    return editor.evaluate(
        (editor, [c, n]) => {
            const number = [...editor.querySelectorAll('.line-numbers')].find((el) => el.textContent.trim() === String(n));
            if (!number) return false;
            const y = number.getBoundingClientRect().top;
            return [...editor.querySelectorAll(`.${c}`)].some((el) => Math.abs(el.getBoundingClientRect().top - y) < 4);
        },
        [cls, line],
    );
}

/**
 * Ranks together: right-click the torchrun line of together.sh → Debug Training Command →
 * ranks 0,1; only rank 0 reaches the breakpoint, and rank 1 (waiting in the all_reduce) is
 * shown paused too; Training Jobs shows both ranks' live state (docs/ranks-view.png); Step
 * Over All Ranks → rank 0 one line on, rank 1 reported waiting in all_reduce; a breakpoint
 * bound to rank 1 (Bind Breakpoint to Ranks…) on a line both pass → Continue All Ranks → rank
 * 1 alone stops there (rank 0 paused with it); the breakpoint off; Continue All Ranks → both
 * run; stop → no process left.
 */
async function scenarioTogether(page, ws) {
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
    const tStep = Date.now();
    await palette(page, 'Rank Debugger: Step Over All Ranks');
    await waitFor(`rank 0 paused on step at line ${stepLine}, rank 1 still waiting`, async () => {
        stacks = await rankSubtrees(page);
        return /Paused on step/i.test(stacks[0] ?? '') && /Paused: waiting in all_reduce/i.test(stacks[1] ?? '') && (await frameRow(page, 'together_train.py', stepLine).count()) > 0;
    }, 30000).catch((e) => {
        throw new Error(`${e.message}; Call Stack: ${JSON.stringify(stacks)}`);
    });
    await waitFor(`the editor's current-line arrow on line ${stepLine}`, () => glyphOnLine(page, 'codicon-debug-stackframe', stepLine), 15000);
    let report = '';
    await waitFor('the step\'s report (rank 1 waiting in all_reduce)', async () => {
        const texts = await page.locator('.statusbar-item, .notifications-toasts .notification-list-item').allInnerTexts();
        report = texts.map((t) => t.replace(/\s+/g, ' ')).find((t) => /stepped over/.test(t)) ?? report;
        return /rank 0 stepped over/.test(report) && /rank 1 waiting in all_reduce/.test(report);
    }, 15000).catch((e) => {
        throw new Error(`${e.message}; the report: ${JSON.stringify(report)}`);
    });
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
async function scenarioTogetherMore(page, ws) {
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

/** The document of the webview whose page heading is `title` (code-server nests it: iframe.webview → #active-frame). */
async function webviewWith(page, title) {
    for (const f of page.frames()) {
        try {
            if ((await f.locator('header h1', { hasText: title }).count()) > 0) return f;
        } catch {
            // a frame going away
        }
    }
    return undefined;
}

/** When (ms since the epoch) the frame's document was shown: its DOMContentLoaded, by the browser's clock (this machine's). */
async function shownAt(frame) {
    return frame.evaluate(() => globalThis.performance.timeOrigin + (globalThis.performance.getEntriesByType('navigation')[0]?.domContentLoadedEventEnd ?? globalThis.performance.now()));
}

/** The Compare panel's groups: [{ranks, odd, text}], largest first. */
async function compareGroups(frame) {
    return frame.locator('.group').evaluateAll((els) => els.map((el) => ({ ranks: el.dataset.ranks, odd: el.classList.contains('odd'), text: el.innerText.replace(/\s+/g, ' ') })));
}

/** Waits until the panel titled `title` shows groups `want` (rank lists as `0,1,3`; the odd ones marked); answers the frame and the groups. */
async function waitGroups(page, title, want, timeoutMs = 30000) {
    let seen;
    let frame;
    await waitFor(`the panel ${title} with groups ${JSON.stringify(want)}`, async () => {
        frame = await webviewWith(page, title);
        if (!frame || (await frame.locator('.status.busy').count())) return false;
        seen = await compareGroups(frame);
        return JSON.stringify(seen.map((g) => g.ranks)) === JSON.stringify(want);
    }, timeoutMs, 50).catch(async (e) => {
        const status = frame ? await frame.locator('.status').allInnerTexts().catch(() => []) : [];
        throw new Error(`${e.message}; groups: ${JSON.stringify(seen)}; status: ${JSON.stringify(status)}`);
    });
    return { frame, groups: seen };
}

/**
 * Compare Across Ranks: right-click compare.sh → `0 arm` (rank 0 debugged, every rank armed) →
 * rank 0 stops at a breakpoint in main(), the others wait for it in the all_reduce → right-click
 * `weight` in the Variables view → Compare Across Ranks → the panel groups ranks 0,1,3 and 2, rank
 * 2 highlighted, `differs from rank 0 at element 1234 [19, 18]` (docs/compare-panel.png with
 * RANKDEBUG_E2E_DOCS=1) → Make a group of these ranks on rank 2's group → the group commands act
 * on it → `grad` typed in the Debug Console, then Compare Across Ranks… offers it → rank 1's NaN
 * counted (red), its sparkline point red → tolerance 1e-2 on `weight` → one group of 4 → stop → no
 * process left.
 */
async function scenarioCompare(page, ws) {
    const timings = {};
    const py = fs.readFileSync(path.join(ws, 'compare_train.py'), 'utf8').split('\n');
    const bp = py.findIndex((l) => l.includes('# the e2e breakpoint')) + 1;
    say('compare: a breakpoint only rank 0 reaches, then right-click compare.sh → 0 arm');
    await palette(page, 'View: Close All Editor Groups');
    await openFile(page, 'compare_train.py');
    await setBreakpoint(page, bp);
    const line = await commandLine(page, 'compare.sh', 'torchrun --nproc_per_node 4 compare_train.py');
    await rowMenu(page, line, 'Debug Training Command');
    await page.locator('.quick-input-list .monaco-list-row', { hasText: 'rank 3 · node 0 · local 3' }).waitFor({ timeout: 30000 });
    await page.locator('.quick-input-widget input').fill('0 arm');
    await sleep(700); // the language server reads the typed ranks
    const tEnter = Date.now();
    await page.keyboard.press('Enter');

    say('waiting for rank 0 at the breakpoint');
    await page.locator('.debug-call-stack .monaco-list-row', { hasText: /^\s*rank 0(?!\d)/ }).first().waitFor({ timeout: 120000 });
    await waitFor(`rank 0's frame at line ${bp}`, async () => {
        if (await frameRow(page, 'compare_train.py', bp).first().isVisible()) return true;
        const row = page.locator('.debug-call-stack .monaco-list-row', { hasText: /^\s*rank 0(?!\d)/ }).first();
        if ((await row.getAttribute('aria-expanded')) === 'false') await row.locator('.monaco-tl-twistie').click().catch(() => undefined);
        await expandMainThreads(page);
        return false;
    }, 120000, 500);
    timings.pausedMs = Date.now() - tEnter;
    say(`rank 0 paused at compare_train.py:${bp} ${timings.pausedMs} ms after the quick-pick`);
    // The other ranks are armed: Training Jobs lists them so (their handlers answer eval).
    await palette(page, 'View: Show Run and Debug');
    await openJobsView(page);
    const pane = jobsPane(page);
    await waitFor('ranks 1-3 armed in Training Jobs', async () => {
        const rows = (await pane.locator('.monaco-list-row').allInnerTexts()).map((t) => t.replace(/\s+/g, ' '));
        if ([1, 2, 3].every((r) => rows.some((t) => new RegExp(`rank ${r}(?!\\d).*armed`).test(t)))) return true;
        await palette(page, 'Rank Debugger: Refresh Training Jobs');
        return false;
    }, 60000, 2000);
    timings.stacksMs = await compareStackTree(page, pane, bp);

    // Variables: Locals of rank 0's frame in main().
    const locals = page.locator('.debug-variables .monaco-list-row', { hasText: 'Locals' }).first();
    await locals.waitFor({ timeout: 30000 });
    if ((await locals.getAttribute('aria-expanded')) === 'false') await locals.click();
    const weightRow = page.locator('.debug-variables .monaco-list-row', { hasText: /^\s*weight\b/ }).first();
    await weightRow.waitFor({ timeout: 30000 });
    // The variable's own menu must not be offered outside our sessions: here it is ours.
    say('Variables: right-click weight → Compare Across Ranks');
    const tClick = await rowMenu(page, weightRow, 'Compare Across Ranks');
    await waitFor('the Compare: weight panel', () => webviewWith(page, 'Compare: weight'), 30000, 25);
    timings.panelMs = Date.now() - tClick; // first seen by the test (its polling included)
    let { frame, groups } = await waitGroups(page, 'Compare: weight', ['0,1,3', '2']);
    timings.seenMs = Date.now() - tClick;
    timings.weightMs = Math.round((await shownAt(frame)) - tClick);
    if (groups[0].odd || !groups[1].odd) throw new Error(`rank 2's group is not the one highlighted: ${JSON.stringify(groups)}`);
    if (!/differs from rank 0 at element 1234 \[19, 18\]/.test(groups[1].text)) throw new Error(`rank 2's group does not name the element: ${groups[1].text}`);
    const rowClass = (f, r) => f.locator(`tr[data-rank="${r}"]`).getAttribute('class');
    if ((await rowClass(frame, 2)) !== 'odd' || (await rowClass(frame, 0)) !== null) throw new Error(`table rows: rank 2 ${await rowClass(frame, 2)}, rank 0 ${await rowClass(frame, 0)}`);
    const verdict = (await frame.locator('.verdict').innerText()).replace(/\s+/g, ' ');
    const spark = await frame.locator('svg.line[data-metric="mean"] circle.odd[data-rank="2"]').count();
    if (!spark) throw new Error('the mean sparkline does not mark rank 2');
    say(`Compare: weight — panel first seen ${timings.panelMs} ms, groups shown ${timings.weightMs} ms after the click (seen by the test at ${timings.seenMs} ms); ${verdict}; ${groups.map((g) => `[${g.ranks}]${g.odd ? ' odd' : ''}`).join(' ')}; ${groups[1].text.match(/differs[^M]*/)?.[0]?.trim()}`);
    await shot(page, '25-compare-weight');
    if (docs('compare-panel')) {
        await palette(page, 'View: Toggle Maximize Editor Group');
        await sleep(800);
        // The panel alone, without the tab bar (the debug toolbar floats over it).
        await page.locator('.editor-group-container.active .editor-container').screenshot({ path: path.join(ROOT, 'docs', 'compare-panel.png') });
        await palette(page, 'View: Toggle Maximize Editor Group');
        await sleep(300);
        frame = await webviewWith(page, 'Compare: weight');
    }

    // Make a group of rank 2's group: the group commands act on it.
    say('Make a group of these ranks (rank 2)');
    await frame.locator('.group.odd button.make-group').click();
    const input = page.locator('.quick-input-widget input');
    await page.locator('.quick-input-widget', { hasText: 'Make a group of ranks 2' }).waitFor({ timeout: 15000 });
    await input.fill('odd weight');
    await page.keyboard.press('Enter');
    await page.locator('.statusbar-item', { hasText: 'Group commands act on group odd weight (ranks 2)' }).first().waitFor({ timeout: 15000 });
    say('the group commands act on group odd weight (ranks 2)');

    // grad, typed in rank 0's Debug Console, then offered by Compare Across Ranks….
    await palette(page, 'Focus on Debug Console View');
    const repl = page.locator('.repl-input-wrapper .monaco-editor');
    await repl.waitFor();
    await repl.click();
    await page.keyboard.type('grad');
    await page.keyboard.press('Enter');
    await page.locator('.repl .monaco-list-row', { hasText: 'tensor([1., 1., 1., 1., 1., 1., 1., 1.])' }).first().waitFor({ timeout: 30000 });
    say('Debug Console: grad; Compare Across Ranks… offers it');
    await palette(page, 'Rank Debugger: Compare Across Ranks…');
    const offered = page.locator('.quick-input-list .monaco-list-row', { hasText: 'last in the Debug Console of rank 0' }).first();
    await offered.waitFor({ timeout: 15000 });
    if (!/grad/.test(await offered.innerText())) throw new Error(`offered: ${await offered.innerText()}`);
    const tGrad = Date.now();
    await offered.click();
    ({ frame, groups } = await waitGroups(page, 'Compare: grad', ['0,2,3', '1']));
    timings.gradMs = Math.round((await shownAt(frame)) - tGrad);
    const nanCell = frame.locator('tr[data-rank="1"] td.nan');
    if ((await nanCell.innerText()).trim() !== '1' || !/\bbad\b/.test((await nanCell.getAttribute('class')) ?? '')) throw new Error(`rank 1's NaN cell: ${await nanCell.innerText()} (${await nanCell.getAttribute('class')})`);
    const nans = await frame.locator('td.nan').allInnerTexts();
    if (JSON.stringify(nans.map((t) => t.trim())) !== '["0","1","0","0"]') throw new Error(`NaN counts: ${JSON.stringify(nans)}`);
    if (!(await frame.locator('svg.line rect.bad[data-rank="1"]').count())) throw new Error('no red NaN mark for rank 1 in the sparkline');
    say(`Compare: grad — NaN counts ${nans.join(',')}, rank 1 odd and red (${timings.gradMs} ms after the pick)`);
    await shot(page, '26-compare-grad');

    // Tolerance 1e-2 on weight: rank 2 joins the others.
    say('tolerance 1e-2 on weight');
    await page.locator('.tabs-container .tab', { hasText: 'Compare: weight' }).first().click();
    frame = await waitFor('the weight panel shown', () => webviewWith(page, 'Compare: weight'), 15000, 100);
    await frame.locator('#tolerance').fill('1e-2');
    const tTol = Date.now();
    await frame.locator('#apply').click();
    ({ frame, groups } = await waitGroups(page, 'Compare: weight', ['0,1,2,3']));
    timings.toleranceMs = Math.round((await shownAt(frame)) - tTol);
    const verdict2 = (await frame.locator('.verdict').innerText()).replace(/\s+/g, ' ');
    if (!/All 4 ranks equal/.test(verdict2)) throw new Error(`verdict within 1e-2: ${verdict2}`);
    if (!/within 0\.01/.test(await frame.locator('header .meta').innerText())) throw new Error('the header does not say the tolerance');
    say(`within 1e-2: ${verdict2} (${timings.toleranceMs} ms after Apply)`);
    await shot(page, '27-compare-tolerance');

    say('stopping the job');
    const tStop = Date.now();
    await stopDebugging(page);
    const left = await waitFor('the job to end', () => (jobProcesses(ws).length ? false : 'none'), 30000).catch(() => jobProcesses(ws));
    if (left !== 'none') throw new Error(`processes left after stop: ${left.join('; ')}`);
    say(`stopped; no process left (${Date.now() - tStop} ms)`);
    await palette(page, 'View: Close All Editor Groups');
    await openFile(page, 'compare_train.py');
    await goToLine(page, bp);
    await page.keyboard.press('F9');
    return timings;
}

/**
 * Show Stacks on the compare job while rank 0 is paused at its breakpoint and ranks 1-3 wait for
 * it in the all_reduce: the merged tree's root holds 4/4 ranks and branches in main() into rank 0
 * at the breakpoint line (the odd one out: it stays put while the others wait for it) and ranks
 * 1-3 in all_reduce; the collective warning names group 0. docs/stack-tree.png with
 * RANKDEBUG_E2E_DOCS=1 (or =stack-tree). The panel is closed again; answers the ms from the click
 * to the tree shown.
 */
async function compareStackTree(page, pane, bp) {
    say('Show Stacks on the compare job');
    const jobRow = pane.locator('.monaco-list-row', { hasText: /torchrun · \d{8}-\d{6}-\d+/ }).first();
    const tStacks = await rowMenu(page, jobRow, 'Show Stacks');
    const frame = stacksFrame(page);
    const heads = frame.locator('main.tree .row.head');
    let seen = [];
    await waitFor('the merged tree branching into rank 0 and ranks 1-3', async () => {
        seen = await heads.evaluateAll((els) =>
            els.map((el) => ({
                count: el.querySelector('.count')?.textContent?.trim(),
                who: el.querySelector('.who')?.textContent?.trim(),
                name: el.querySelector('.name')?.textContent?.trim(),
                place: el.querySelector('.place')?.textContent?.trim(),
                odd: el.classList.contains('odd'),
                marked: !!el.querySelector('.who mark'),
                branch: (el.closest('details')?.innerText ?? '').replace(/\s+/g, ' '),
            })),
        ).catch(() => []);
        return seen.some((h) => h.count === '4/4') && seen.some((h) => h.count === '3/4' && h.who === '1-3') && seen.some((h) => h.count === '1/4' && h.who === '0');
    }, 60000, 250).catch((e) => {
        throw new Error(`${e.message}; tree heads: ${JSON.stringify(seen)}`);
    });
    const ms = Date.now() - tStacks;
    // Ranks 1-3 wait in the all_reduce (library code, under their loop's line); rank 0 is at the breakpoint.
    const others = seen.find((h) => h.count === '3/4' && h.who === '1-3');
    if (!/all_reduce/.test(others?.branch ?? '')) throw new Error(`ranks 1-3's branch does not reach all_reduce: ${others?.branch}`);
    const rank0Head = seen.find((h) => h.count === '1/4' && h.who === '0');
    if (!new RegExp(`compare_train\\.py:${bp}\\b`).test(rank0Head?.branch ?? '')) throw new Error(`rank 0's branch is not at compare_train.py:${bp}: ${rank0Head?.branch}`);
    if (!rank0Head?.odd || !rank0Head.marked) throw new Error(`rank 0's branch is not marked as the odd one out: ${JSON.stringify(rank0Head)}`);
    const warnings = frame.locator('.collectives');
    const warning = (await warnings.count()) ? (await warnings.innerText()).replace(/\s+/g, ' ') : '';
    say(`stack tree: ${seen.map((h) => `${h.count} [${h.who}] ${h.name}${h.odd ? ' (odd)' : ''}`).join(' | ')}; ${warning || 'no collective warning'} (${ms} ms after the click)`);
    await shot(page, '24-compare-stack-tree');
    if (docs('stack-tree')) await stackTreePicture(page, frame);
    await palette(page, 'View: Close Editor');
    return ms;
}

/**
 * docs/stack-tree.png: the Show Stacks panel alone, ~950 px wide (as compare-panel.png), down to
 * the tree's last row. The side bars and the debug console are hidden meanwhile (the panel sits in
 * the only editor group, which cannot be maximised); the window is put back, side bar shown.
 */
async function stackTreePicture(page, frame) {
    await palette(page, 'View: Hide Panel');
    await palette(page, 'View: Toggle Primary Side Bar Visibility');
    if (await page.locator('.part.auxiliarybar').isVisible()) await palette(page, 'View: Hide Secondary Side Bar');
    const size = page.viewportSize();
    await page.setViewportSize({ width: 1000, height: 800 });
    try {
        await sleep(800); // the workbench and the webview lay out again
        const editor = await page.locator('.editor-group-container.active .editor-container').boundingBox();
        const tree = await frame.locator('main.tree').boundingBox();
        if (!editor || !tree) throw new Error('the stacks panel has no box to take a picture of');
        const height = Math.min(editor.height, Math.ceil(tree.y + tree.height - editor.y + 16));
        await page.screenshot({ path: path.join(ROOT, 'docs', 'stack-tree.png'), clip: { x: editor.x, y: editor.y, width: editor.width, height } });
        say(`docs/stack-tree.png: ${Math.round(editor.width)}×${height}`);
    } finally {
        if (size) await page.setViewportSize(size);
        await palette(page, 'View: Toggle Primary Side Bar Visibility');
        await sleep(300);
    }
}

async function terminal(page) {
    await palette(page, 'Terminal: Create New Terminal');
    const term = page.locator('.terminal-wrapper.active .xterm, .terminal .xterm').last();
    await term.waitFor({ timeout: 30000 });
    await term.click();
    await sleep(1500); // the shell's prompt (and its shell integration) starts
    return term;
}

async function scenarioTerminalShim(page, ws, bpLine) {
    say('terminal: rankdebug --ranks 1 torchrun ... (the shim on PATH)');
    await terminal(page);
    await page.keyboard.type(`export PATH="$PATH:${path.dirname(PYTHON)}"; cd ${ws}`);
    await page.keyboard.press('Enter');
    await page.keyboard.type('rankdebug --ranks 1 torchrun --nproc_per_node 2 train.py --steps 5');
    await page.keyboard.press('Enter');
    await page.locator('.debug-call-stack .monaco-list-row', { hasText: 'rank 1' }).first().waitFor({ timeout: 120000 });
    await frameRow(page, 'train.py', bpLine).first().waitFor({ timeout: 60000 });
    say('rank 1 of the terminal job paused at the breakpoint');
    await shot(page, '07-terminal-shim');
    await stopDebugging(page);
    const left = await waitFor('the terminal job to end', () => (jobProcesses(ws).length ? false : []), 20000).catch(() => jobProcesses(ws));
    if (left.length) throw new Error(`processes left after stopping the terminal job: ${left.join('; ')}`);
    say('stopped the terminal job; no process left');
}

async function scenarioLastCommand(page) {
    say('terminal: a training command that fails → offer to debug it');
    await terminal(page);
    await page.keyboard.type(`export PATH="$PATH:${path.dirname(PYTHON)}"`);
    await page.keyboard.press('Enter');
    await page.keyboard.type('torchrun --nproc_per_node 2 train.py --steps not-a-number');
    await page.keyboard.press('Enter');
    const toast = page.locator('.notifications-toasts .notification-list-item', { hasText: 'Debug it with Rank Debugger' });
    await toast.waitFor({ timeout: 120000 });
    await shot(page, '08-offer');
    await toast.getByRole('button', { name: 'Debug It' }).click();
    await page.locator('.quick-input-list .monaco-list-row', { hasText: 'rank 1 · node 0 · local 1' }).waitFor({ timeout: 30000 });
    await page.keyboard.press('Escape');
    say('the failed command was offered for debugging, with its ranks');
}

async function scenarioLaunchJson(page, ws, cmdLine) {
    say('Generate launch.json from the command in train.sh');
    await showFile(page, 'train.sh');
    await page.locator('.tab.active', { hasText: 'train.sh' }).waitFor();
    await goToLine(page, cmdLine);
    await palette(page, 'Rank Debugger: Generate launch.json for Training Command');
    await page.locator('.quick-input-list .monaco-list-row', { hasText: 'rank 1 · node 0 · local 1' }).waitFor({ timeout: 30000 });
    await page.keyboard.press('Enter');
    await page.locator('.tab.active', { hasText: 'launch.json' }).waitFor({ timeout: 30000 });
    await page.locator('.monaco-editor .view-line', { hasText: '"type": "rankdebug"' }).first().waitFor({ timeout: 15000 });
    await shot(page, '09-launch-json');
    const doc = parseJsonc(fs.readFileSync(path.join(ws, '.vscode', 'launch.json'), 'utf8'));
    const types = new Set((doc.configurations ?? []).map((c) => `${c.type}/${c.request}`));
    for (const t of ['rankdebug/launch', 'rankdebug/attach', 'debugpy/attach']) if (!types.has(t)) throw new Error(`launch.json lacks a ${t} configuration`);
    if (!(doc.compounds ?? []).length) throw new Error('launch.json has no compound');
    // Our configurations use only the properties our schema declares (VS Code flags others);
    // the debugpy ones are validated by the Python extension, which is not installed here.
    const manifest = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
    const attrs = manifest.contributes.debuggers[0].configurationAttributes;
    const common = new Set(['type', 'request', 'name', 'preLaunchTask', 'postDebugTask', 'presentation', 'internalConsoleOptions', 'suppressMultipleSessionWarning', 'debugServer']);
    for (const c of doc.configurations.filter((x) => x.type === 'rankdebug')) {
        const extra = Object.keys(c).filter((k) => !common.has(k) && !(k in attrs[c.request].properties));
        if (extra.length) throw new Error(`launch.json: ${c.name} has properties the schema does not declare: ${extra.join(', ')}`);
    }
    say('launch.json holds rankdebug and debugpy configurations');
}

async function scenarioCodeLens(page, ws, bpLine) {
    say('code lens ▶ Debug: the remembered ranks (1), no question asked');
    await showFile(page, 'train.sh');
    const lens = page.locator('.monaco-editor .codelens-decoration a', { hasText: 'Debug · 2 ranks' }).first();
    await lens.waitFor({ timeout: 30000 });
    const t0 = Date.now();
    await lens.click();
    await page.locator('.debug-call-stack .monaco-list-row', { hasText: 'rank 1' }).first().waitFor({ timeout: 120000 });
    await frameRow(page, 'train.py', bpLine).first().waitFor({ timeout: 60000 });
    say(`rank 1 paused ${Date.now() - t0} ms after the lens click`);
    await shot(page, '10-code-lens');
    await stopDebugging(page);
    const left = await waitFor('the job to end', () => (jobProcesses(ws).length ? false : []), 20000).catch(() => jobProcesses(ws));
    if (left.length) throw new Error(`processes left: ${left.join('; ')}`);
}

/** The lines of one side of the diff editor, as text (Monaco renders spaces as U+00A0). */
async function diffSide(page, side) {
    const rows = await page.locator(`.monaco-diff-editor .editor.${side} .view-line`).allInnerTexts();
    return rows.map((t) => t.replace(/\u00a0/g, ' '));
}

async function scenarioSmoke(page, ws) {
    say('smoke run: a breakpoint in smoke_train.py, then the Smoke run lens on smoke.sh');
    const py = fs.readFileSync(path.join(ws, 'smoke_train.py'), 'utf8').split('\n');
    const bpLine = py.findIndex((l) => l.includes('loss = model(x)')) + 1;
    await openFile(page, 'smoke_train.py');
    await goToLine(page, bpLine);
    await page.keyboard.press('F9');
    await openFile(page, 'smoke.sh');
    const lens = page.locator('.monaco-editor .codelens-decoration a', { hasText: 'Smoke run' }).first();
    await lens.waitFor({ timeout: 90000 });
    const t0 = Date.now();
    await lens.click();
    await page.locator('.monaco-diff-editor').first().waitFor({ timeout: 60000 });
    const right = await waitFor('the smoke command on the right side of the diff', async () => {
        const lines = await diffSide(page, 'modified');
        return lines.some((l) => /--max_iters=\d+/.test(l) && !l.includes('5000')) ? lines : false;
    }, 60000);
    const left = await diffSide(page, 'original');
    const diffMs = Date.now() - t0;
    if (!left.some((l) => l.includes('--max_iters=5000'))) throw new Error(`the left side is not the command as written: ${left.join(' / ')}`);
    if (!right.some((l) => l.includes('--nproc_per_node 2'))) throw new Error(`the smoke command lost the job's shape: ${right.join(' / ')}`);
    say(`diff shown ${diffMs} ms after the lens click: ${right.filter((l) => l.includes('→')).length} changes listed`);
    await shot(page, '40-smoke-diff');
    if (docs('smoke-diff')) {
        // The diff at the width a reader needs: side bar and panel out of the way for the shot.
        await palette(page, 'View: Toggle Primary Side Bar Visibility');
        await palette(page, 'View: Toggle Panel Visibility');
        await sleep(800);
        await page.locator('.editor-group-container.active .editor-container').screenshot({ path: path.join(ROOT, 'docs', 'smoke-diff.png') });
        await palette(page, 'View: Toggle Primary Side Bar Visibility');
        await palette(page, 'View: Toggle Panel Visibility');
    }
    if (fs.readFileSync(path.join(ws, 'smoke.sh'), 'utf8').includes('max_iters=5000') === false) throw new Error('smoke.sh was edited');

    say('Debug Smoke Command (editor title) → rank 1 → paused at the breakpoint');
    const toast = page.locator('.notifications-toasts .notification-list-item', { hasText: 'Smoke run of' });
    const button = toast.getByRole('button', { name: 'Debug' });
    const tDebug = Date.now();
    if (await button.isVisible().catch(() => false)) await button.click();
    else await page.locator('.editor-actions .action-label[aria-label*="Debug Smoke Command"]').first().click();
    await page.locator('.quick-input-widget input').waitFor({ state: 'visible', timeout: 30000 });
    await page.locator('.quick-input-list .monaco-list-row', { hasText: 'rank 1 · node 0 · local 1' }).waitFor({ timeout: 30000 });
    await page.locator('.quick-input-widget input').fill('1');
    await page.keyboard.press('Enter');
    await page.locator('.debug-call-stack .monaco-list-row', { hasText: 'rank 1' }).first().waitFor({ timeout: 120000 });
    await frameRow(page, 'smoke_train.py', bpLine).first().waitFor({ timeout: 120000 });
    const debugMs = Date.now() - tDebug;
    say(`rank 1 of the smoke command paused ${debugMs} ms after Debug`);
    await shot(page, '41-smoke-debug');
    await stopDebugging(page);
    const stillThere = await waitFor('the job to end', () => (jobProcesses(ws).length ? false : []), 20000).catch(() => jobProcesses(ws));
    if (stillThere.length) throw new Error(`processes left: ${stillThere.join('; ')}`);
    return { diffMs, debugMs };
}

async function main() {
    fs.rmSync(ART, { recursive: true, force: true });
    fs.mkdirSync(ART, { recursive: true });
    process.env.RANKDEBUG_TRACE_FILE = TRACE; // code-server, and so every job, inherits it
    if (!fs.existsSync(VSIX)) throw new Error(`${VSIX} is missing: run npm run package first`);
    if (!fs.existsSync(PYTHON)) throw new Error(`${PYTHON} is missing: run bash scripts/setup.sh first`);
    const { codeServer, node24 } = provision();
    const base = fs.mkdtempSync('/tmp/rankdebug-e2e-');
    const { ws, bpLine, cmdLine } = makeWorkspace(base);
    let server;
    let context;
    let page;
    let failed = false;
    try {
        server = await startCodeServer(codeServer, node24, base, ws);
        const tBrowser = Date.now();
        context = await chromium.launchPersistentContext(path.join(base, 'chromium'), {
            executablePath: process.env.RANKDEBUG_CHROMIUM ?? '/usr/bin/chromium',
            headless: true,
            viewport: { width: 1600, height: 1000 },
            args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
        });
        page = context.pages()[0] ?? (await context.newPage());
        page.setDefaultTimeout(60000);
        await page.goto(`http://127.0.0.1:${server.port}/?folder=${encodeURIComponent(ws)}`);
        await page.locator('.monaco-workbench').waitFor({ timeout: 90000 });
        say(`workbench up in ${Date.now() - tBrowser} ms`);
        // RANKDEBUG_E2E_ONLY=jobs,foreign runs only those scenarios (while working on them).
        const only = (process.env.RANKDEBUG_E2E_ONLY ?? '').split(',').filter(Boolean);
        const want = (name) => !only.length || only.includes(name);
        if (want('rightclick')) {
            const r1 = await scenarioRightClick(page, ws, bpLine);
            results.push(`right-click → rank 1 paused: ${r1.pausedMs} ms; from the quick-pick's answer ${r1.afterPickMs} ms, ${(r1.afterPickMs / r1.plainMs).toFixed(2)}× a plain run reaching the line (${r1.plainMs} ms)`);
        }
        if (want('jobs')) {
            await scenarioJobsView(page, ws, bpLine, cmdLine);
            results.push('Training Jobs view: attach to a job started outside VS Code');
        }
        if (want('foreign')) {
            const r3 = await scenarioForeignJob(page, ws);
            results.push(`plain torchrun job: listed; Show Stacks rendered in ${r3.stacksMs} ms; Attach → rank 1 paused in ${r3.attachMs} ms`);
        }
        if (want('armed')) {
            const r4 = await scenarioArmedEval(page, ws);
            results.push(`armed job: Evaluate in Rank → the Eval channel shows rank 1's value (${r4.ms} ms, typing included)`);
        }
        if (want('armui')) {
            const r5 = await scenarioArmedFromEditor(page, ws);
            results.push(`armed from the editor: job listed armed ${r5.armedMs} ms after Enter; Attach (clicked twice) → one rank 1 session, at the breakpoint in ${r5.attachMs} ms; stop left no process`);
        }
        if (want('together')) {
            const r6 = await scenarioTogether(page, ws);
            results.push(
                `ranks together: ranks 0,1 debugged; rank 0 at the breakpoint → both shown paused in ${r6.pausedMs} ms after the quick-pick; Step Over All Ranks → rank 0 on the next line, rank 1 reported waiting in all_reduce (${r6.stepMs} ms); a breakpoint bound to rank 1 → Continue All Ranks → rank 1 alone at it in ${r6.boundMs} ms; Continue All Ranks → both running in ${r6.continueMs} ms; stop left no process`,
            );
        }
        if (want('together2')) {
            const r7 = await scenarioTogetherMore(page, ws);
            results.push(
                `ranks together, more: no breakpoint; Run Chosen Ranks to Cursor → both ranks paused on the line in ${r7.runToMs} ms (rank 1 2 s late), no breakpoint left there; Continue All Ranks → both running in ${r7.continueMs} ms; rank 1 raises → paused on the exception, rank 0 with it in all_reduce, in ${r7.crashMs} ms; 6 s later (3 s collective timeout) both still paused, processes alive, Debug Console: loss → 7.25; stop left no process; ${r7.totalMs} ms in all`,
            );
        }
        if (want('compare')) {
            const r8 = await scenarioCompare(page, ws);
            results.push(
                `compare across ranks: rank 0 debugged, every rank armed, paused in ${r8.pausedMs} ms; Show Stacks → the tree branches into rank 0 (odd) and ranks 1-3 in all_reduce, shown ${r8.stacksMs} ms after the click; Variables → weight → Compare Across Ranks → groups [0,1,3] [2] (rank 2 odd, element 1234 [19, 18]) shown ${r8.weightMs} ms after the click; Make a group → group commands on rank 2; grad from the Debug Console → NaN on rank 1 (red) in ${r8.gradMs} ms; tolerance 1e-2 → one group in ${r8.toleranceMs} ms; stop left no process`,
            );
        }
        if (want('compareroutes')) {
            const helpers = { say, sleep, waitFor, palette, openFile, showFile, goToLine, rowMenu, pickMenuItem, frameRow, expandMainThreads, waitGroups, shownAt, shot, stopDebugging, jobProcesses };
            const r = await scenarioCompareRoutes(page, ws, helpers);
            results.push(`compare routes: Watch → weight → Compare Across Ranks → [0,1,3] [2] shown ${r.watchMs} ms after the click; editor selection grad → Compare Across Ranks → [0,2,3] [1] (NaN on rank 1) in ${r.selectionMs} ms; stop left no process`);
        }
        if (want('whystuck')) {
            const helpers = { say, sleep, waitFor, palette, commandLine, rowMenu, shot, webviewWith, waitGroups, openJobsView, jobsPane, stopDebugging, jobProcesses, docs, ROOT };
            const r = await scenarioWhyStuck(page, ws, helpers);
            results.push(`why stuck: rankdebug.hangSeconds 5 → the hang notification naming rank 3 ${r.noticeMs} ms after Enter; Why Is This Job Stuck? → the panel (rank 3's class the culprit, ranks 0-2 in all_reduce #4, group 0 at #4 against #3) ${r.panelMs} ms after the click; the finding's link opened the barrier's line; Debug culprit → rank 3's session in ${r.culpritMs} ms; Debug one per class → rank 0 · 2 like it; Compare across classes → ranks 0 and 3 apart in ${r.compareMs} ms; stop left no process`);
        }
        if (want('sessioncap')) {
            const helpers = { say, sleep, waitFor, palette, openFile, showFile, goToLine, setBreakpoint, commandLine, rowMenu, rankSubtrees, expandMainThreads, sideBarWidth, openJobsView, jobsPane, shot, stopDebugging, jobProcesses, docs, ROOT };
            const r = await scenarioSessionCap(page, ws, helpers);
            results.push(`session cap: rankdebug.maxSessions 2, ranks 0-3 → two rank sessions, all four paused ${r.pausedMs} ms after the quick-pick; Open Session on rank 3 (all stopped) → its session, past the cap, in ${r.openPausedMs} ms; Continue All Ranks → all four running in ${r.continueMs} ms, two sessions again in ${r.trimMs} ms; Open Session on a running rank → its session in ${r.openRunningMs} ms, still two; Pause All Ranks → all four paused in ${r.pauseMs} ms; stop left no process`);
        }
        if (want('perclass')) {
            const helpers = { say, sleep, waitFor, palette, rowMenu, shot, openJobsView, jobsPane, stacksFrame, rankPids, processes, stopDebugging, docs, ROOT, ART, PYTHON };
            const r = await scenarioPerClass(page, ws, helpers);
            results.push(`per class: a plain torchrun found running and watched (rankdebug.hangSeconds 5) → the hang notification naming rank 3 ${r.noticeMs} ms after Training Jobs was shown; Show Stacks → ranks 0-2 and rank 3 apart in ${r.stacksMs} ms; Debug this class on ranks 0-2 → rank 0 · 2 like it in ${r.classMs} ms; Debug one rank per class → rank 3 too in ${r.perClassMs} ms, one session per class; detached, the job ended → its watcher ended`);
        }
        if (want('coords')) {
            const helpers = { say, sleep, waitFor, palette, commandLine, rowMenu, shot, openJobsView, jobsPane, jobProcesses, waitGroups, webviewWith, docs, ROOT };
            const r = await scenarioCoords(page, ws, helpers);
            results.push(`coords: ${JSON.stringify(r)}`);
        }
        if (want('started')) {
            const helpers = { say, waitFor, openFile, setBreakpoint, commandLine, rowMenu, rankSubtrees, expandMainThreads, shot, stopDebugging, jobProcesses };
            const r = await scenarioStartedRanks(page, ws, helpers);
            results.push(`started: a command whose rank count is not known → Choose when the ranks start → the pick filled with ranks 0 and 1 (Fabric's copy) ${r.fillMs} ms after the choice → rank 1 checked → paused at its breakpoint ${r.pausedMs} ms after Enter; 1 typed ${r.typedEarly ? 'before rank 1 started' : 'after rank 1 started'} → rank 1 paused ${r.standingMs} ms after the choice; stop left no process`);
        }
        if (want('ray')) {
            const r10 = await scenarioRay(page, ws);
            results.push(`Ray: right-click a verl-shaped driver → ranks 1,2 typed → both actor ranks paused in ${r10.pausedMs} ms; stop left no process (raylet, GCS, workers)`);
        }
        if (want('scale')) {
            const r = await scenarioScale(page, ws);
            results.push(`scale: the quick-pick of 1,024 ranks shown ${r.pickMs} ms after the menu click (node separators), filtered to "rank 1000" in ${r.filterMs} ms; Training Jobs, opened, listed a ${r.nRanks}-rank job in ${r.rowMs} ms and drew its ranks grouped ${r.viewMs} ms after the click, of which the refresh (rankdebug jobs, rows, VS Code's asks) ${r.refreshMs} ms`);
        }
        if (want('multinode')) {
            const h = { say, sleep, waitFor, openFile, setBreakpoint, commandLine, rowMenu, shot, stopDebugging, rankSubtrees, stopGroup, PYTHON, ROOT, VSIX, ART };
            const r = await scenarioMultinode(h, codeServer, node24);
            results.push(r.skipped ? `multinode: not run (${r.skipped})` : `multinode: right-click a 2-node torchrun (rankdebug.hosts: node1) → ranks 1 (node 0) and 3 (node 1) paused in ${r.pausedMs} ms; stop left nothing on either node`);
        }
        if (want('shim')) {
            await scenarioTerminalShim(page, ws, bpLine);
            results.push('terminal: rankdebug torchrun ... attached rank 1; stop ended the job');
        }
        if (want('last')) {
            await scenarioLastCommand(page);
            results.push('terminal: a failed training command is offered for debugging');
        }
        if (want('launchjson')) {
            await scenarioLaunchJson(page, ws, cmdLine);
            results.push('Generate launch.json: rankdebug and debugpy configurations written');
        }
        if (want('smoke')) {
            const r9 = await scenarioSmoke(page, ws);
            results.push(`smoke run: the Smoke run lens → the diff (5000 iterations → a few, the user's file unchanged) in ${r9.diffMs} ms; Debug → rank 1 of the smoke command paused in ${r9.debugMs} ms; stop left no process`);
        }
        if (want('codelens')) {
            await scenarioCodeLens(page, ws, bpLine);
            results.push('code lens ▶ Debug with the remembered ranks');
        }
    } catch (e) {
        failed = true;
        console.error(`[e2e] FAILED: ${e instanceof Error ? e.stack : e}`);
        if (page) await shot(page, 'failure');
    } finally {
        if (page) await shot(page, 'last');
        await context?.close().catch(() => undefined);
        stopGroup(server?.proc);
        await sleep(500);
        // Keep the extension's and code-server's logs with the screenshots.
        try {
            const logs = path.join(base, 'user', 'logs');
            if (fs.existsSync(logs)) fs.cpSync(logs, path.join(ART, 'logs'), { recursive: true });
            for (const run of fs.readdirSync(path.join(ART, 'logs'))) {
                const file = path.join(ART, 'logs', run, 'exthost1', 'rankdebug.rankdebug', 'Rank Debugger.log');
                if (!fs.existsSync(file)) continue;
                const text = fs.readFileSync(file, 'utf8');
                const act = /activate\(\) returned in (\d+) ms/.exec(text)?.[1];
                const full = /activated in (\d+) ms/.exec(text)?.[1];
                if (act) results.push(`activation: activate() ${act} ms; with the language server ready ${full ?? '?'} ms`);
            }
        } catch {
            // best effort
        }
        const left = await waitFor('no process left', () => (jobProcesses(base).length ? false : []), 15000).catch(() => jobProcesses(base));
        if (left.length) {
            console.error(`[e2e] processes left: ${left.join('; ')}`);
            failed = true;
        }
        fs.rmSync(base, { recursive: true, force: true });
    }
    for (const r of results) say(`ok: ${r}`);
    say(failed ? 'FAILED (screenshots and logs in .artifacts/e2e)' : 'passed');
    fs.writeFileSync(path.join(ART, 'summary.txt'), `${results.join('\n')}\n${failed ? 'FAILED' : 'passed'}\n`);
    process.exit(failed ? 1 : 0);
}

await main();
