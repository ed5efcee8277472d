import fc from 'fast-check';
import { JsonText, jsonBytes, toJson } from '../../src/http/respond';
import { Decimal } from '../../src/finance/rules/money';

describe('toJson', () => {
  it('writes what JSON.stringify writes for any value without decimals', () => {
    const value = fc.oneof(
      fc.jsonValue(),
      fc.dictionary(fc.string(), fc.oneof(fc.constant(undefined), fc.double(), fc.date({ noInvalidDate: true }), fc.string())),
      fc.array(fc.oneof(fc.constant(undefined), fc.integer(), fc.constant(() => 1))),
    );
    fc.assert(fc.property(value, (v) => expect(toJson(v)).toBe(JSON.stringify(v))));
  });

  it('writes decimals as exact number literals, never in exponent form', () => {
    const body = { a: new Decimal('0.1').plus('0.2'), b: new Decimal('123456789012345678901234.5678'), c: new Decimal('-0'), d: [new Decimal('1e-7')] };
    expect(toJson(body)).toBe('{"a":0.3,"b":123456789012345678901234.5678,"c":0,"d":[0.0000001]}');
    expect(JSON.parse(toJson(body)).a).toBe(0.3);
  });

  it('writes JsonText fragments as they are', () => {
    expect(toJson({ x: new JsonText('12.50'), y: [new JsonText('{"k":[1,2]}')] })).toBe('{"x":12.50,"y":[{"k":[1,2]}]}');
  });

  it('writes JsonText given in pieces, large or small, as one text', () => {
    const row = '{"name":"\u00C4 \u{1F4B6} \\"x\\""}';
    const rows = Array.from({ length: 3000 }, () => row).join(','); // over the 4 KB a piece is kept apart at
    const body = { tasks: new JsonText('[', rows, ']'), n: 1, t: new JsonText('2.50'), u: undefined };
    const expected = `{"tasks":[${rows}],"n":1,"t":2.50}`;
    expect(toJson(body)).toBe(expected);
    expect(jsonBytes(body).equals(Buffer.from(expected, 'utf8'))).toBe(true);
    expect(JSON.parse(jsonBytes(body).toString('utf8')).tasks).toHaveLength(3000);
    // Pieces on either side of that length, next to small ones, as a breakdown's parts come.
    for (const length of [4095, 4096, 4097, 12_000]) {
      const part = `"${'\u00C4'.repeat(length - 2)}"`; // a JSON string of exactly `length` characters
      const parts = { task: { id: 'a', n: new JsonText('1.5') }, grouped: new JsonText(part), members: new JsonText(part), end: true };
      const text = `{"task":{"id":"a","n":1.5},"grouped":${part},"members":${part},"end":true}`;
      expect(toJson(parts)).toBe(text);
      expect(jsonBytes(parts).equals(Buffer.from(text, 'utf8'))).toBe(true);
    }
  });

  it('encodes to the same bytes as Buffer.from(JSON.stringify(...)) for any value without decimals', () => {
    const value = fc.oneof(fc.jsonValue(), fc.dictionary(fc.string({ unit: 'binary' }), fc.string({ unit: 'binary', maxLength: 100 })));
    fc.assert(fc.property(value, (v) => expect(jsonBytes(v).equals(Buffer.from(JSON.stringify(v) ?? 'null', 'utf8'))).toBe(true)));
  });

  it('refuses values JSON cannot carry exactly', () => {
    expect(() => toJson({ n: new Decimal(Infinity) })).toThrow(TypeError);
    expect(() => toJson({ n: BigInt(1) })).toThrow(TypeError);
  });
});

describe('toJson on objects that are not plain', () => {
  it('writes objects of any prototype, and keys needing escapes, as JSON.stringify does', () => {
    class Point {
      constructor(
        readonly x: number,
        readonly y: number,
      ) {}
    }
    const bare = Object.assign(Object.create(null) as Record<string, unknown>, { 'a"b': 1, '\u2028': [2], é: { z: null } });
    const values = [new Point(1, 2), bare, new Map([[1, 2]]), { nested: [new Point(3, 4), bare] }, [bare, bare]];
    for (const value of values) expect(toJson(value)).toBe(JSON.stringify(value));
  });
});
