import { loadConfig } from '../../src/config';

describe('HEAP_GROWING_PERCENT in the configuration', () => {
  it('is 60 by default; 0 leaves V8 its own heuristics', () => {
    expect(loadConfig({}).heapGrowingPercent).toBe(60);
    expect(loadConfig({ HEAP_GROWING_PERCENT: '0' }).heapGrowingPercent).toBe(0);
    expect(loadConfig({ HEAP_GROWING_PERCENT: '25' }).heapGrowingPercent).toBe(25);
  });

  it('refuses what is not a whole percentage', () => {
    for (const value of ['-1', '2.5', 'ten', '1001']) {
      expect(() => loadConfig({ HEAP_GROWING_PERCENT: value })).toThrow(/HEAP_GROWING_PERCENT/);
    }
  });
});

describe('secrets in the configuration (ADMIN_TOKEN, METRICS_TOKEN)', () => {
  it('refuses one under 32 characters, naming the variable and never echoing the value', () => {
    for (const name of ['ADMIN_TOKEN', 'METRICS_TOKEN']) {
      const short = 'short-secret-0123456789abcdefgh'; // 31 characters
      expect(short).toHaveLength(31);
      let message = '';
      try {
        loadConfig({ [name]: short });
      } catch (err) {
        message = (err as Error).message;
      }
      expect(message).toBe(`Invalid configuration: ${name}: must be at least 32 characters (for example: openssl rand -hex 32)`);
      expect(message).not.toContain(short);
    }
  });

  it('accepts 32 characters or more', () => {
    const secret = '0123456789abcdef0123456789abcdef';
    expect(loadConfig({ ADMIN_TOKEN: secret, METRICS_TOKEN: `${secret}x` })).toMatchObject({ adminToken: secret, metricsToken: `${secret}x` });
    expect(loadConfig({})).toMatchObject({ adminToken: undefined, metricsToken: undefined });
  });
});

describe('TRUST_PROXY in the configuration', () => {
  it("is false by default, and takes a number of proxies or the proxies' addresses and subnets", () => {
    expect(loadConfig({}).trustProxy).toBe(false);
    expect(loadConfig({ TRUST_PROXY: 'false' }).trustProxy).toBe(false);
    expect(loadConfig({ TRUST_PROXY: '0' }).trustProxy).toBe(false);
    expect(loadConfig({ TRUST_PROXY: '1' }).trustProxy).toBe(1);
    expect(loadConfig({ TRUST_PROXY: 'loopback' }).trustProxy).toBe('loopback');
    expect(loadConfig({ TRUST_PROXY: '10.0.0.0/8, 192.168.1.7,loopback' }).trustProxy).toBe('10.0.0.0/8,192.168.1.7,loopback');
    expect(loadConfig({ TRUST_PROXY: 'fd00::/8' }).trustProxy).toBe('fd00::/8');
  });

  it('refuses true (any client could name its own address) and what is not an address', () => {
    for (const value of ['true', 'yes', '10.0.0.0/33', 'proxy.example.com', '10.0.0.1/8/1', '-1']) {
      expect(() => loadConfig({ TRUST_PROXY: value })).toThrow(/^Invalid configuration: TRUST_PROXY: must be false, the number of proxies/);
    }
  });
});
