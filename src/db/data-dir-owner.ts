import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';

/*
 * One process owns an embedded data directory (docs/operations.md, Start-up). PGlite gives no protection of its
 * own: a second process opening the same directory works on a private copy and its writes are lost.
 *
 * The owner listens on a local socket named after the directory's identity (device and inode, so two
 * spellings or a symlink of one directory meet). Binding is atomic, so of two processes starting at
 * once exactly one wins; the other connects, learns the owner's pid and refuses. On Linux the socket
 * lives in the abstract namespace, which the kernel releases the instant the owner dies (even by
 * SIGKILL), so a directory left by a killed process is free at the next start with nothing to clean
 * up. Elsewhere a socket file in the directory plays the same part; a leftover file nobody answers on
 * is stale and is replaced.
 */

export class DataDirInUseError extends Error {
  constructor(
    readonly dataDir: string,
    readonly ownerPid: number | undefined,
  ) {
    super(
      `DATA_DIR ${dataDir} is in use by process ${ownerPid ?? '(unknown pid)'}; ` +
        'stop that process first (one process at a time may open an embedded database)',
    );
    this.name = 'DataDirInUseError';
  }
}

export type DataDirClaim = { release: () => Promise<void> };

function socketAddress(dataDir: string): { address: string; abstract: boolean } {
  const stat = fs.statSync(dataDir);
  const identity = crypto.createHash('sha256').update(`${stat.dev}:${stat.ino}`).digest('hex').slice(0, 32);
  if (process.platform === 'linux') return { address: `\0project-finance-service/${identity}`, abstract: true };
  if (process.platform === 'win32') return { address: `\\\\?\\pipe\\project-finance-service-${identity}`, abstract: true };
  return { address: path.join(dataDir, '.owner.sock'), abstract: false };
}

function listen(server: net.Server, address: string): Promise<NodeJS.ErrnoException | undefined> {
  return new Promise((resolve) => {
    const onError = (err: NodeJS.ErrnoException) => resolve(err);
    server.once('error', onError);
    server.listen(address, () => {
      server.off('error', onError);
      resolve(undefined);
    });
  });
}

/** Asks the owner for its pid; undefined when nobody answers (the socket file is stale). */
function askOwner(address: string): Promise<{ answered: boolean; pid?: number }> {
  return new Promise((resolve) => {
    const socket = net.connect(address);
    let reply = '';
    socket.setEncoding('utf8');
    socket.setTimeout(5_000, () => socket.destroy());
    socket.on('data', (chunk: string) => (reply += chunk));
    socket.on('error', () => resolve({ answered: false }));
    socket.on('close', () => {
      const pid = Number.parseInt(reply, 10);
      resolve({ answered: true, pid: Number.isSafeInteger(pid) ? pid : undefined });
    });
  });
}

/**
 * Claims `dataDir` (an existing directory) for this process until `release` is called or the process
 * ends; throws DataDirInUseError naming the owner when another live process holds it.
 */
export async function claimDataDir(dataDir: string): Promise<DataDirClaim> {
  const { address, abstract } = socketAddress(dataDir);
  for (let attempt = 0; attempt < 2; attempt += 1) {
    const server = net.createServer((socket) => socket.end(String(process.pid)));
    const failure = await listen(server, address);
    if (!failure) {
      server.unref();
      return { release: () => new Promise<void>((resolve) => server.close(() => resolve())) };
    }
    if (failure.code !== 'EADDRINUSE') throw failure;
    const owner = await askOwner(address);
    if (owner.answered || abstract) throw new DataDirInUseError(dataDir, owner.pid);
    // A socket file that nobody answers on was left by a process that died: replace it once.
    fs.rmSync(address, { force: true });
  }
  throw new DataDirInUseError(dataDir, undefined);
}
