-- Every host's scheduling facts in one call, for dashboards. No arguments of its own.
-- Returns a flat list: host, waiting (queued now), leased, next allowed time ("" if none),
-- why it waits ("" if nothing), ...
local out = {}
for _, host in ipairs(redis.call('SMEMBERS', K_HOSTS)) do
  out[#out + 1] = host
  out[#out + 1] = redis.call('ZCARD', QPREFIX .. host)
  out[#out + 1] = num(redis.call('HGET', K_INFLIGHT, host), 0)
  out[#out + 1] = redis.call('HGET', K_NEXTOK, host) or ''
  out[#out + 1] = redis.call('HGET', K_WHY, host) or ''
end
return out
