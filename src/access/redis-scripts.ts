/**
 * The Lua scripts the Redis store runs. Each runs atomically inside Redis, so
 * every instance sharing one Redis sees one exact budget, and "now" is Redis'
 * own clock (TIME), not any instance's. Charges live in a sorted set per key
 * id, scored by the millisecond they were made, member "<seq>:<cost>"; beside
 * it a counter holds the credits those charges add up to, so a charge never
 * reads the whole set.
 */

/**
 * KEYS[1] key record hash, KEYS[2] charge log, KEYS[3] credits used in the window.
 * ARGV[1] cost, ARGV[2] the instance's budget, ARGV[3] window in ms, ARGV[4] "charge" or "peek".
 * Returns {status, nowMs, used, oldestMs, walk, budget[, member]}: status is
 * unauthenticated, admitted, rejected or peek; used and oldestMs (nil when
 * the log is empty) describe the window before this charge; on a refusal
 * walk is the log's oldest charges {atMs, cost, atMs, cost, ...}, just
 * enough of them to free the refused cost, and empty otherwise; budget is
 * the one applied: the key record's own `budget` field when it has one,
 * else ARGV[2]; member, on an admitted charge only, names it in the log
 * (REFUND_SCRIPT's ARGV[1]).
 *
 * Expired charges are removed and their credits taken off the counter (each
 * once: amortised O(1) per charge). A missing counter (a log written before
 * the counter existed) is recounted from the log once. Both keys expire one
 * window after the newest charge, when every charge in them has aged out.
 */
export const CHARGE_SCRIPT = `
local mode = ARGV[4]
if mode == 'charge' then
  if redis.call('HEXISTS', KEYS[1], 'created_at_ms') == 0 then return {'unauthenticated', 0, 0, false, {}, 0} end
  if redis.call('HEXISTS', KEYS[1], 'revoked_at_ms') == 1 then return {'unauthenticated', 0, 0, false, {}, 0} end
end
local budget = tonumber(redis.call('HGET', KEYS[1], 'budget')) or tonumber(ARGV[2])
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local window = tonumber(ARGV[3])
local horizon = now - window

local function cost_of(member)
  return tonumber(string.match(member, ':(%d+)$'))
end
local function credits_of(members)
  local total = 0
  for i = 1, #members do total = total + cost_of(members[i]) end
  return total
end

local stored = tonumber(redis.call('GET', KEYS[3]))
local used
if stored then
  used = stored - credits_of(redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', horizon))
  redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', horizon)
else
  redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', horizon)
  used = credits_of(redis.call('ZRANGE', KEYS[2], 0, -1))
end
local oldest = redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')
local oldest_ms = false
if #oldest == 0 then used = 0 else oldest_ms = tonumber(oldest[2]) end

-- A zero total is deleted rather than kept, so an idle key leaves nothing behind.
local function save(total)
  if total == 0 then redis.call('DEL', KEYS[3]) else redis.call('SET', KEYS[3], total) end
  local newest = redis.call('ZRANGE', KEYS[2], -1, -1, 'WITHSCORES')
  if #newest == 0 then return end
  local expires_at = tonumber(newest[2]) + window
  redis.call('PEXPIREAT', KEYS[2], expires_at)
  if total ~= 0 then redis.call('PEXPIREAT', KEYS[3], expires_at) end
end

-- The oldest charges, in pages, until they add up to must_free credits.
local function oldest_first(must_free)
  local walk, freed, start = {}, 0, 0
  while freed < must_free do
    local page = redis.call('ZRANGE', KEYS[2], start, start + 31, 'WITHSCORES')
    if #page == 0 then break end
    for i = 1, #page, 2 do
      local cost = cost_of(page[i])
      walk[#walk + 1] = tonumber(page[i + 1])
      walk[#walk + 1] = cost
      freed = freed + cost
      if freed >= must_free then break end
    end
    start = start + 32
  end
  return walk
end

if mode ~= 'charge' then
  if stored ~= used then save(used) end
  return {'peek', now, used, oldest_ms, {}, budget}
end
local cost = tonumber(ARGV[1])
if used + cost > budget then
  if stored ~= used then save(used) end
  local walk = {}
  if cost <= budget then walk = oldest_first(used + cost - budget) end
  return {'rejected', now, used, oldest_ms, walk, budget}
end
local seq = redis.call('HINCRBY', KEYS[1], 'charge_seq', 1)
redis.call('ZADD', KEYS[2], now, seq .. ':' .. cost)
save(used + cost)
return {'admitted', now, used, oldest_ms, {}, budget, seq .. ':' .. cost}
`;

/**
 * KEYS[1] charge log, KEYS[2] credits used in the window (the charge's key's).
 * ARGV[1] the charge's member "<seq>:<cost>", ARGV[2] credits to give back.
 * Takes the credits off the charge (its member rewritten with the smaller
 * cost at the same score, or removed at zero) and off the counter; a charge
 * no longer in the log (aged out, or given back whole) gives nothing.
 * DECRBY keeps the counter's expiry. Returns the credits given back.
 */
export const REFUND_SCRIPT = `
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not score then return 0 end
local seq, cost = string.match(ARGV[1], '^(%d+):(%d+)$')
if not seq then return 0 end
cost = tonumber(cost)
local back = math.min(cost, math.floor(tonumber(ARGV[2]) or 0))
if back <= 0 then return 0 end
redis.call('ZREM', KEYS[1], ARGV[1])
if back < cost then redis.call('ZADD', KEYS[1], score, seq .. ':' .. (cost - back)) end
if redis.call('EXISTS', KEYS[2]) == 1 then
  if redis.call('DECRBY', KEYS[2], back) <= 0 then redis.call('DEL', KEYS[2]) end
end
return back
`;

/**
 * KEYS[1] key ids sorted by creation, KEYS[2] digest -> id index (one hash
 * tag on a cluster, so this stays atomic there; the record hash, in its own
 * slot, is written before and removed by the caller when this refuses).
 * ARGV[1] id, ARGV[2] digest, ARGV[3] created-at ms, ARGV[4] "1" to insert only into an empty store.
 * Returns 1 when stored, 0 when refused because a key already exists.
 */
export const INSERT_KEY_INDEX_SCRIPT = `
if ARGV[4] == '1' and redis.call('ZCARD', KEYS[1]) > 0 then return 0 end
redis.call('HSET', KEYS[2], ARGV[2], ARGV[1])
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
return 1
`;

/**
 * KEYS[1] key record hash. Stamps revoked_at_ms with Redis' clock unless already set.
 * Returns not-found, already-revoked or revoked.
 */
export const REVOKE_KEY_SCRIPT = `
if redis.call('HEXISTS', KEYS[1], 'created_at_ms') == 0 then return 'not-found' end
if redis.call('HEXISTS', KEYS[1], 'revoked_at_ms') == 1 then return 'already-revoked' end
local time = redis.call('TIME')
redis.call('HSET', KEYS[1], 'revoked_at_ms', tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000))
return 'revoked'
`;

/**
 * KEYS[1] key record hash. ARGV[1] the key's own budget, or "" to go back to the instance's.
 * Returns 0 when there is no such key, 1 when set.
 */
export const SET_BUDGET_SCRIPT = `
if redis.call('HEXISTS', KEYS[1], 'created_at_ms') == 0 then return 0 end
if ARGV[1] == '' then redis.call('HDEL', KEYS[1], 'budget') else redis.call('HSET', KEYS[1], 'budget', ARGV[1]) end
return 1
`;
