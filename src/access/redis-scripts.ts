/**
 * The Lua scripts the Redis store runs. Each runs atomically inside Redis, so
 * every instance sharing one Redis sees one exact budget, and "now" is Redis'
 * own clock (TIME), not any instance's. Charges live in a sorted set per key
 * id, scored by the millisecond they were made, member "<seq>:<cost>".
 */

/**
 * KEYS[1] key record hash, KEYS[2] charge log.
 * ARGV[1] cost, ARGV[2] budget, ARGV[3] window in ms, ARGV[4] "charge" or "peek".
 * Returns {status, nowMs, {atMs, cost, atMs, cost, ...}} where the log is the
 * live log before this charge; status is unauthenticated, admitted, rejected or peek.
 */
export const CHARGE_SCRIPT = `
local mode = ARGV[4]
if mode == 'charge' then
  if redis.call('HEXISTS', KEYS[1], 'created_at_ms') == 0 then return {'unauthenticated', 0, {}} end
  if redis.call('HEXISTS', KEYS[1], 'revoked_at_ms') == 1 then return {'unauthenticated', 0, {}} end
end
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local window = tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now - window)
local entries = redis.call('ZRANGE', KEYS[2], 0, -1, 'WITHSCORES')
local log = {}
local used = 0
for i = 1, #entries, 2 do
  local cost = tonumber(string.match(entries[i], ':(%d+)$'))
  used = used + cost
  log[#log + 1] = tonumber(entries[i + 1])
  log[#log + 1] = cost
end
if mode ~= 'charge' then return {'peek', now, log} end
local cost = tonumber(ARGV[1])
if used + cost > tonumber(ARGV[2]) then return {'rejected', now, log} end
local seq = redis.call('HINCRBY', KEYS[1], 'charge_seq', 1)
redis.call('ZADD', KEYS[2], now, seq .. ':' .. cost)
-- Every entry is at most one window old, so the whole log may vanish one window after its newest charge.
redis.call('PEXPIRE', KEYS[2], window)
return {'admitted', now, log}
`;

/**
 * KEYS[1] key ids sorted by creation, KEYS[2] digest -> id index, KEYS[3] key record hash.
 * ARGV[1] id, ARGV[2] name, ARGV[3] digest, ARGV[4] created-at ms, ARGV[5] "1" to insert only into an empty store.
 * Returns 1 when stored, 0 when refused because a key already exists.
 */
export const INSERT_KEY_SCRIPT = `
if ARGV[5] == '1' and redis.call('ZCARD', KEYS[1]) > 0 then return 0 end
redis.call('HSET', KEYS[3], 'id', ARGV[1], 'name', ARGV[2], 'digest', ARGV[3], 'created_at_ms', ARGV[4])
redis.call('HSET', KEYS[2], ARGV[3], ARGV[1])
redis.call('ZADD', KEYS[1], ARGV[4], ARGV[1])
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
