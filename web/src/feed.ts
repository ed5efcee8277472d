import type { Api, FeedEvent, FeedPage } from './api';

const PAGE = 1000;
/** Events kept per project: the screen shows the latest of them. */
const KEEP = 20;

/**
 * The team's event feed as the screen follows it. The feed runs oldest first and has no project
 * filter, so it is read from the start once, then only from where the last read stopped; each
 * project keeps its latest events (by `data.project_id`, which every event carries).
 */
export class FeedFollower {
  private after = 0;
  private readonly latest = new Map<string, FeedEvent[]>();
  /** One read at a time, in order: a refresh asked for during a read reads again after it, so it sees its own write. */
  private queue: Promise<void> = Promise.resolve();

  constructor(private readonly api: Api) {}

  /** The project's latest events, newest first, after reading what is new in the feed. */
  async latestOf(projectId: string): Promise<FeedEvent[]> {
    const read = this.queue.then(() => this.readNew());
    this.queue = read.catch(() => undefined);
    await read;
    return [...(this.latest.get(projectId) ?? [])].reverse();
  }

  private async readNew(): Promise<void> {
    for (;;) {
      const page = (await this.api.json<FeedPage>(`/events?after=${this.after}&limit=${PAGE}`)).body;
      for (const event of page.events) {
        const projectId = event.data.project_id;
        if (typeof projectId !== 'string') continue;
        const kept = this.latest.get(projectId) ?? [];
        kept.push(event);
        if (kept.length > KEEP) kept.shift();
        this.latest.set(projectId, kept);
      }
      this.after = page.next_after;
      if (page.events.length < PAGE) return;
    }
  }
}
