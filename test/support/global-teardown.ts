export default async function globalTeardown(): Promise<void> {
  await globalThis.__PFS_TEARDOWN__?.();
}
