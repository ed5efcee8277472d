import { EventEmitter } from 'node:events';
import type { NextFunction, Request, Response } from 'express';
import { createActivity } from '../../src/http/activity';

/** A response that can be finished or closed by hand. */
const response = () => new EventEmitter() as unknown as Response & EventEmitter;

describe('activity (background work waits for quiet moments)', () => {
  it('is not quiet while a request is in flight, and counts a request once, at its close (which follows its finish)', () => {
    const activity = createActivity();
    expect(activity.quietFor(0)).toBe(true);
    const next = jest.fn() as NextFunction;
    const a = response();
    const b = response();
    activity.track({} as Request, a, next);
    activity.track({} as Request, b, next);
    expect(next).toHaveBeenCalledTimes(2);
    expect(activity.quietFor(0)).toBe(false);
    a.emit('finish');
    a.emit('close');
    // b is still in flight: a's finish and close must not count twice.
    expect(activity.quietFor(0)).toBe(false);
    b.emit('close');
    expect(activity.quietFor(0)).toBe(true);
  });

  it('is not quiet until the given time has passed since the last request ended', () => {
    let now = 1_000;
    const activity = createActivity(() => now);
    expect(activity.quietFor(200)).toBe(true);
    const res = response();
    activity.track({} as Request, res, jest.fn() as NextFunction);
    now += 500;
    res.emit('finish');
    res.emit('close');
    now += 199;
    expect(activity.quietFor(200)).toBe(false);
    now += 1;
    expect(activity.quietFor(200)).toBe(true);
  });
});
