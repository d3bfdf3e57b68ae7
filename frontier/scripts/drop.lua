-- Forget scheduled ids whose SQL row is gone or already permanent (SQL is the truth).
-- ARGV[6..]: url ids. Returns how many were dropped.
local dropped = 0
for i = 6, #ARGV do
  local id = ARGV[i]
  local host = release(id)
  redis.call('HDEL', K_PARKED, id)
  redis.call('ZREM', K_HUBS, id)
  redis.call('HDEL', K_HUBINFO, id)
  if host then place(host); dropped = dropped + 1 end
end
redis.call('HINCRBY', K_STATS, 'dropped', dropped)
return dropped
