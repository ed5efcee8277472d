import http from 'node:http';
import type { Express } from 'express';

/*
 * The HTTP server of an Express app, whose requests and responses are made with the app's prototypes
 * from the start. Express gives every request and response the app's prototype as it takes them up
 * (Object.setPrototypeOf). V8 gives an object whose prototype changes after it was made a hidden class
 * of its own, so every property lookup on requests and responses, in Express and in this service,
 * found a new shape each time and went the slow way, and the objects lived longer in the heap: a
 * bare server that did only that answered half as many requests. Made with the app's prototype,
 * Express's setPrototypeOf finds it already in place and changes nothing (the language returns early
 * when the prototype is the same). Measured on the full benchmark: /healthz 3,800-5,000 req/s before,
 * 7,000-11,600 after.
 */

type Constructor<T> = new (...args: never[]) => T;

/** A constructor that makes what `base` makes, with `prototype` (which must inherit from base's). */
function madeWith<T>(base: Constructor<T>, prototype: object): Constructor<T> {
  if (!Object.prototype.isPrototypeOf.call(base.prototype, prototype)) throw new TypeError(`the app's prototype does not inherit from ${base.name}`);
  // Node's request and response are constructors of the old kind, meant to be called on a subclass's
  // object. (Reflect.construct with this function as new.target would also take classes, but made
  // /healthz 2.5 times slower.)
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
