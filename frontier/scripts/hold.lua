-- Hold a host back or set its minimum delay. ARGV[6] host, ARGV[7] "hold" (ARGV[8] seconds from
-- now, ARGV[9] reason) or "delay" (ARGV[8] seconds between fetches, 0 clears).
local host, what, seconds = ARGV[6], ARGV[7], tonumber(ARGV[8])
if what == 'hold' then
  hold_until(host, NOW + seconds, ARGV[9])
elseif seconds > 0 then
  redis.call('HSET', K_HOSTDELAY, host, string.format('%.17g', seconds))
else
  redis.call('HDEL', K_HOSTDELAY, host)
end
place(host)
return 1
