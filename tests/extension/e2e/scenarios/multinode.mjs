// End-to-end scenario `multinode` (run.mjs runs it; RANKDEBUG_E2E_ONLY=multinode alone): a
// two-node torchrun job debugged from real VS Code, the way a user on a cluster's first node
// does it, with default settings but `rankdebug.hosts: ["node1"]` (and the test cluster's
// SSH configuration).
//   The nodes are Linux namespaces with their own network, PIDs, /tmp and hostname, each with
//   a real sshd (tests/multinode/cluster.py, held by hold_cluster.py). code-server and the
//   browser run on node 0 (nsenter), so VS Code sees what a user logged in there sees.
//   A breakpoint in allreduce.py → right-click the torchrun line of nodes.sh (--nnodes 2, c10d
//   rendezvous on node0) → type `1,3` → rank 1 (node 0) and rank 3 (node 1, through SSH) both
//   paused in the Call Stack → Stop → nothing of the job left on either node.
// Needs root (namespaces); elsewhere it says why and is not run. The helpers are run.mjs's (`h`).
import { spawn, execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as readline from 'node:readline';
import { chromium } from 'playwright-core';
import { codeServerSetup } from '../codeServer.mjs';

/** The cluster, held by hold_cluster.py: its first line, and a way to ask it what is left. */
async function holdCluster(h) {
    const proc = spawn(h.PYTHON, [path.join(h.ROOT, 'tests/multinode/hold_cluster.py')], { stdio: ['pipe', 'pipe', 'inherit'] });
    const lines = readline.createInterface({ input: proc.stdout });
    const queue = [];
    const waiting = [];
    lines.on('line', (l) => (waiting.length ? waiting.shift()(l) : queue.push(l)));
    const next = () => new Promise((resolve) => (queue.length ? resolve(queue.shift()) : waiting.push(resolve)));
    const first = JSON.parse(await next());
    return {
        info: first,
        /** The job's processes left on the nodes (the editor itself aside: code-server, its language server, the browser). */
        async left() {
            proc.stdin.write('left\n');
            return JSON.parse(await next()).filter((x) => !/ server\s*$|code-server|\/chromium/.test(x));
        },
        async close() {
            proc.stdin.end();
            await new Promise((resolve) => (proc.exitCode !== null ? resolve() : proc.on('exit', resolve)));
        },
    };
}

export async function scenarioMultinode(h, codeServer, node24) {
    const cluster = await holdCluster(h);
    if (cluster.info.unavailable) {
        await cluster.close();
        return { skipped: `no namespace cluster here: ${cluster.info.unavailable}` };
    }
    const enter = (wd) => [...cluster.info.nsenter, `--wd=${wd}`, '--'];
    // Not under /tmp: each node has a /tmp of its own.
    const base = fs.mkdtempSync('/var/tmp/rankdebug-e2e-nodes-');
    const ws = path.join(base, 'workspace');
    fs.mkdirSync(ws, { recursive: true });
    fs.copyFileSync(path.join(h.ROOT, 'tests/multinode/scripts/allreduce.py'), path.join(ws, 'allreduce.py'));
    fs.writeFileSync(
        path.join(ws, 'nodes.sh'),
        '#!/bin/bash\n# Two nodes of two ranks; node 1 is started over SSH (rankdebug.hosts).\n' +
            'export GLOO_SOCKET_IFNAME=eth0 OMP_NUM_THREADS=1 ALLREDUCE_STEPS=3\n' +
            'torchrun --nnodes 2 --nproc_per_node 2 --rdzv_backend c10d --rdzv_endpoint node0:29850 --rdzv_id e2e allreduce.py\n',
    );
    const bp = fs.readFileSync(path.join(ws, 'allreduce.py'), 'utf8').split('\n').findIndex((l) => l.includes('sys.stdout.write(')) + 1;
    let server;
    let context;
    try {
        // code-server on node 0 (its port on node 0's own loopback: nothing else there).
        const port = 18000 + Math.floor(Math.random() * 2000);
        const { env, node, install, serve } = codeServerSetup({
            codeServer, node24, base, port, python: h.PYTHON,
            settings: { 'rankdebug.hosts': ['node1'], 'rankdebug.sshConfig': cluster.info.ssh_config },
        });
        env.PATH = `${path.dirname(h.PYTHON)}:${env.PATH}`; // torchrun, as in the user's venv
        execFileSync(node, install(h.VSIX), { env, stdio: ['ignore', 'pipe', 'pipe'] });
        const logPath = path.join(h.ART, 'code-server-nodes.log');
        const log = fs.openSync(logPath, 'w');
        server = spawn(enter(base)[0], [...enter(base).slice(1), node, ...serve(ws)], { env, detached: true, stdio: ['ignore', log, log] });
        await h.waitFor('code-server on node 0', () => /HTTP server listening/.test(fs.readFileSync(logPath, 'utf8')), 60000, 300);
        // The browser on node 0 too (it reaches node 0's loopback); Playwright's pipe passes through nsenter.
        const wrapper = path.join(base, 'chromium-on-node0.sh');
        fs.writeFileSync(wrapper, `#!/bin/sh\nexec ${enter('/').map((a) => `'${a}'`).join(' ')} ${process.env.RANKDEBUG_CHROMIUM ?? '/usr/bin/chromium'} "$@"\n`, { mode: 0o700 });
        context = await chromium.launchPersistentContext(path.join(base, 'chromium'), {
            executablePath: wrapper,
            headless: true,
            viewport: { width: 1600, height: 1000 },
            args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
        });
        const page = context.pages()[0] ?? (await context.newPage());
        page.setDefaultTimeout(60000);
        await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(ws)}`);
        await page.locator('.monaco-workbench').waitFor({ timeout: 90000 });
        h.say('multinode: VS Code on node 0; a breakpoint in allreduce.py, then right-click nodes.sh');
        await h.openFile(page, 'allreduce.py');
        await h.setBreakpoint(page, bp);
        const line = await h.commandLine(page, 'nodes.sh', 'torchrun --nnodes 2');
        await h.rowMenu(page, line, 'Debug Training Command');
        await page.locator('.quick-input-list .monaco-list-row', { hasText: 'rank 3 · node 1 · local 1' }).first().waitFor({ timeout: 30000 });
        await h.shot(page, '50-multinode-pick');
        await page.locator('.quick-input-widget input').fill('1,3');
        const t0 = Date.now();
        await page.keyboard.press('Enter');
        let stacks;
        await h
            .waitFor('ranks 1 (node 0) and 3 (node 1) paused in the Call Stack', async () => {
                stacks = await h.rankSubtrees(page);
                return /Paused/i.test(stacks[1] ?? '') && /Paused/i.test(stacks[3] ?? '');
            }, 180000)
            .catch((e) => {
                throw new Error(`${e.message}; Call Stack: ${JSON.stringify(stacks)}`);
            });
        const pausedMs = Date.now() - t0;
        if (stacks[0] !== undefined || stacks[2] !== undefined) throw new Error(`only ranks 1 and 3 were picked: ${JSON.stringify(stacks)}`);
        if (!/allreduce\.py/.test(`${stacks[1]} ${stacks[3]}`)) h.say(`(the frames are not expanded: ${JSON.stringify(stacks)})`);
        h.say(`ranks 1 and 3 paused ${pausedMs} ms after the answer: ${JSON.stringify(stacks)}`);
        await h.shot(page, '51-multinode-paused');
        await h.stopDebugging(page);
        let left = [];
        await h.waitFor('nothing of the job left on either node', async () => (left = await cluster.left()).length === 0, 30000).catch(() => {
            throw new Error(`left after Stop: ${left.join('; ')}`);
        });
        return { pausedMs };
    } finally {
        await context?.close().catch(() => undefined);
        h.stopGroup(server);
        await cluster.close();
        fs.rmSync(base, { recursive: true, force: true });
    }
}
