-- Clear a pool's scheduling. ARGV[6] "all" (purge: everything) or "schedule" (rebuild: keep
-- live leases and host politeness). Returns how many host queues were deleted.
local everything = ARGV[6] == 'all'
local hosts = redis.call('SMEMBERS', K_HOSTS)
for _, host in ipairs(hosts) do redis.call('DEL', QPREFIX .. host) end
if everything then
  redis.call('DEL', K_TURNS, K_COOLING, K_PENDING, K_PARKED, K_DELAYED, K_HUBS, K_HUBINFO,
    K_INFLIGHT, K_NEXTOK, K_HOSTDELAY, K_WHY, K_STATS, K_HOSTS)
  return #hosts
end
for _, id in ipairs(redis.call('ZRANGE', K_DELAYED, 0, -1)) do redis.call('HDEL', K_PARKED, id) end
redis.call('DEL', K_TURNS, K_COOLING, K_DELAYED, K_HUBS, K_HUBINFO, K_HOSTS)
for _, id in ipairs(redis.call('ZRANGE', K_PENDING, 0, -1)) do
  local host = split2(redis.call('HGET', K_PARKED, id))
  if host then redis.call('SADD', K_HOSTS, host) end
end
redis.call('HSET', K_STATS, 'waiting', 0)
return #hosts
