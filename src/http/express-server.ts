import http from 'node:http';
import type { Express } from 'express';

/*
 * The one patch of a framework's workings this service keeps, because it pays on real endpoints
 * (breakdowns, lists and time logs: paired runs in BENCHMARKS.md). Express gives every request
 * and response the app's prototype as it takes them up (Object.setPrototypeOf); V8 then gives each of
 * them a hidden class of its own, so every property lookup on them went the slow way. Made with the
 * app's prototypes from the start, Express's setPrototypeOf finds them in place and changes nothing.
 * It relies on Express setting exactly app.request and app.response: express is pinned exactly in
 * package.json, and test/unit/express-server.test.ts fails if an upgrade sets anything else.
 */

type Constructor<T> = new (...args: never[]) => T;

/** A constructor that makes what `base` makes, with `prototype` (which must inherit from base's). */
function madeWith<T>(base: Constructor<T>, prototype: object): Constructor<T> {
  if (!Object.prototype.isPrototypeOf.call(base.prototype, prototype)) throw new TypeError(`the app's prototype does not inherit from ${base.name}`);
  // Node's request and response are constructors of the old kind, meant to be called on a subclass's
  // object. (Reflect.construct with this function as new.target would also take classes, but was
  // measured slower.)
  const construct = function (this: T, ...args: unknown[]) {
    (base as unknown as (this: T, ...args: unknown[]) => void).apply(this, args);
  };
  construct.prototype = prototype;
  return construct as unknown as Constructor<T>;
}

/** An HTTP server for `app`, its requests and responses made with the app's own prototypes. */
export function serverFor(app: Express): http.Server {
  return http.createServer(
    {
      IncomingMessage: madeWith<http.IncomingMessage>(http.IncomingMessage as Constructor<http.IncomingMessage>, app.request) as typeof http.IncomingMessage,
      ServerResponse: madeWith<http.ServerResponse>(http.ServerResponse as Constructor<http.ServerResponse>, app.response) as typeof http.ServerResponse,
    },
    app,
  );
}
