// What the end-to-end scenarios share (run.mjs runs them; each is one module under scenarios/):
// the run's places (ROOT, ART, the trace file, the .vsix, the Python), its log line (`say`),
// code-server's start, and the steps through VS Code's UI that more than one scenario takes
// (the palette, Quick Open, a breakpoint, a row's context menu, Training Jobs, the webviews).
import { execFileSync, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { codeServerSetup } from './codeServer.mjs';

export const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../../..');

export const ART = path.join(ROOT, '.artifacts', 'e2e');

// Every process of a job VS Code starts marks its phases here (rankdebug.runtime.marks).
export const TRACE = path.join(ART, 'trace.log');

export const VSIX = path.join(ROOT, 'dist', 'rankdebug.vsix');

export const PYTHON = process.env.RANKDEBUG_E2E_PYTHON ?? path.join(ROOT, '.venv', 'bin', 'python');

export const T0 = Date.now();

export function say(msg) {
    console.log(`[e2e ${((Date.now() - T0) / 1000).toFixed(1)}s] ${msg}`);
}

export function freePort() {
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
export function runtimeDir(base) {
    const dir = path.join(base, 'run');
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    return dir;
}

/** The workspace's .vscode/settings.json with `patch` merged in (a key set to undefined is removed). */
export function workspaceSettings(ws, patch) {
    const dir = path.join(ws, '.vscode');
    const file = path.join(dir, 'settings.json');
    fs.mkdirSync(dir, { recursive: true });
    const now = fs.existsSync(file) ? JSON.parse(fs.readFileSync(file, 'utf8') || '{}') : {};
    fs.writeFileSync(file, JSON.stringify({ ...now, ...patch }, null, 4));
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Whether this run refreshes the README's picture docs/NAME.png (RANKDEBUG_E2E_DOCS=1, or a list of names). */
export function docs(name) {
    const want = process.env.RANKDEBUG_E2E_DOCS ?? '';
    return want === '1' || want.split(',').includes(name);
}

/** `keep({ pid, cmd, env, cwd, zombie })`'s `pid cmd` line for each process it keeps. */
export function processes(keep) {
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
export function jobProcesses(dir) {
    return processes(({ cmd, env, cwd }) => {
        const isJob = env.includes('RANKDEBUG_JOB=') || (cmd.includes('rankdebug') && / launch /.test(cmd)) || cmd.includes('long_train.py');
        return isJob && cwd.startsWith(dir);
    });
}

export async function waitFor(what, fn, timeoutMs = 60000, every = 250) {
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

export function provision() {
    const line = execFileSync('bash', [path.join(ROOT, 'tests/extension/e2e/provision.sh')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] })
        .trim()
        .split('\n')
        .pop();
    const m = /CODE_SERVER=(\S+) NODE24=(\S+)/.exec(line ?? '');
    if (!m) throw new Error(`provision.sh said: ${line}`);
    return { codeServer: m[1], node24: m[2] };
}

export function makeWorkspace(base) {
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

export async function startCodeServer(cs, node24, base, ws) {
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

export function stopGroup(proc) {
    if (!proc?.pid) return;
    try {
        process.kill(-proc.pid, 'SIGTERM');
    } catch {
        // already gone
    }
}

export async function shot(page, name) {
    await page.screenshot({ path: path.join(ART, `${name}.png`) }).catch(() => undefined);
}

/** Runs a command from the palette. A session that starts meanwhile can take the focus and
 * close the palette as it opens (its input goes inert, then hidden): then it is opened again. */
export async function palette(page, text) {
    const input = page.locator('.quick-input-widget input');
    for (let i = 1; ; i++) {
        await page.keyboard.press('F1');
        try {
            await input.waitFor({ state: 'visible', timeout: 20000 });
            await input.fill(`>${text}`, { timeout: 10000 });
            await page.locator('.quick-input-list .monaco-list-row', { hasText: text.split(': ').pop() }).first().waitFor({ timeout: 30000 });
            break;
        } catch (e) {
            if (i === 3) throw e;
            say(`palette ${text}: ${e instanceof Error ? e.message.split('\n')[0] : e}; again`);
            if (await input.isVisible()) await page.keyboard.press('Escape');
        }
    }
    await page.keyboard.press('Enter');
}

export async function openFile(page, name) {
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
export async function showFile(page, name) {
    const tab = page.locator('.tabs-container .tab', { hasText: name }).first();
    if (await tab.count()) {
        await tab.click();
        await page.locator('.tab.active', { hasText: name }).waitFor();
    } else {
        await openFile(page, name);
    }
}

export async function goToLine(page, line) {
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

/** A breakpoint on `line` of the active editor, set as a user does (the line, then F9). */
export async function setBreakpoint(page, line) {
    await goToLine(page, line);
    await page.locator('.monaco-editor.focused').waitFor();
    await page.keyboard.press('F9');
    await page.locator('.monaco-editor .codicon-debug-breakpoint').first().waitFor({ timeout: 15000 });
}

/** The line of `file` that holds `text`, once the language server's code lens is above it. */
export async function commandLine(page, file, text) {
    await openFile(page, file);
    const line = page.locator('.monaco-editor .view-line', { hasText: text }).first();
    await line.waitFor();
    await page.locator('.monaco-editor .codelens-decoration', { hasText: 'Debug' }).first().waitFor({ timeout: 90000 });
    return line;
}

/** Clicks Stop (or Disconnect) on the debug toolbar; waits until the Call Stack has no rank left. */
export async function stopDebugging(page) {
    await page.locator('.debug-toolbar .codicon-debug-stop, .debug-toolbar .codicon-debug-disconnect').first().click();
    await waitFor('every debug session to end', async () => (await page.locator('.debug-call-stack .monaco-list-row', { hasText: /rank \d/ }).count()) === 0, 30000);
}

/** The call stack row for a paused frame at `file:line`. */
export function frameRow(page, file, line) {
    return page.locator('.debug-call-stack .monaco-list-row', { hasText: new RegExp(`${file.replace('.', '\\.')}\\s*${line}:`) });
}

/**
 * Expands the Call Stack's collapsed MainThread rows: a chosen rank also serves rankdebug's
 * handler thread, which debugpy lists, and VS Code then leaves the stopped thread collapsed.
 */
export async function expandMainThreads(page) {
    const rows = page.locator('.debug-call-stack .monaco-list-row[aria-expanded="false"]', { hasText: /^\s*MainThread/ });
    for (let i = await rows.count(); i > 0; i--) await rows.first().locator('.monaco-tl-twistie').click({ timeout: 1000 }).catch(() => undefined);
}

/** The Training Jobs pane, and a row in it. */
export function jobsPane(page) {
    return page.locator('.pane', { has: page.locator('.pane-header', { hasText: 'Training Jobs' }) });
}

export function jobsHeader(page) {
    return page.locator('.pane-header', { hasText: 'Training Jobs' });
}

export async function openJobsView(page) {
    const header = jobsHeader(page);
    await header.waitFor({ timeout: 15000 });
    if ((await header.getAttribute('aria-expanded')) === 'false') await header.click();
}

/** Clicks `name` in the open context menu, again when the menu swallowed the click (it stays open); the time of the click. */
export async function pickMenuItem(page, name) {
    const item = page.getByRole('menuitem', { name });
    await item.waitFor({ timeout: 5000 });
    await item.click({ timeout: 5000 });
    const t = Date.now();
    await sleep(300);
    if (await item.isVisible()) await item.click({ timeout: 2000 }).catch(() => undefined);
    return t;
}

/** Right-click a tree row and pick a menu item; again if a refresh re-rendered the row meanwhile. */
/** In the rank pick of a four-rank command (once its last row is shown), `text` typed, and
 * the language server given the time to read it: Enter is the caller's to press (and time). */
export async function typeRanks(page, text, lastRow = 'rank 3 · node 0 · local 3') {
    await page.locator('.quick-input-list .monaco-list-row', { hasText: lastRow }).waitFor({ timeout: 30000 });
    await page.locator('.quick-input-widget input').fill(text);
    await sleep(700); // the language server reads the typed ranks
}

export async function rowMenu(page, row, name) {
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
export function stacksFrame(page) {
    return page.frameLocator('iframe.webview').last().frameLocator('#active-frame');
}

/** rank → pid of the ranks a launcher started (its children with RANK in their environment). */
export function rankPids(launcher) {
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

/** The Call Stack rows under each rank session (its own row, its threads and frames): rank → texts. */
export async function rankSubtrees(page) {
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
export async function sideBarWidth(page, width) {
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
export async function glyphOnLine(page, cls, line) {
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

/** The document of the webview whose page heading is `title` (code-server nests it: iframe.webview → #active-frame). */
export async function webviewWith(page, title) {
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
export async function shownAt(frame) {
    return frame.evaluate(() => globalThis.performance.timeOrigin + (globalThis.performance.getEntriesByType('navigation')[0]?.domContentLoadedEventEnd ?? globalThis.performance.now()));
}

/** The Compare panel's groups: [{ranks, odd, text}], largest first. */
export async function compareGroups(frame) {
    return frame.locator('.group').evaluateAll((els) => els.map((el) => ({ ranks: el.dataset.ranks, odd: el.classList.contains('odd'), text: el.innerText.replace(/\s+/g, ' ') })));
}

/** Waits until the panel titled `title` shows groups `want` (rank lists as `0,1,3`; the odd ones marked); answers the frame and the groups. */
export async function waitGroups(page, title, want, timeoutMs = 30000) {
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

export async function terminal(page) {
    await palette(page, 'Terminal: Create New Terminal');
    const term = page.locator('.terminal-wrapper.active .xterm, .terminal .xterm').last();
    await term.waitFor({ timeout: 30000 });
    await term.click();
    await sleep(1500); // the shell's prompt (and its shell integration) starts
    return term;
}
