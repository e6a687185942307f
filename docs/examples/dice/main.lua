-- An example Lua plugin (docs/PLUGINS.md "Lua plugins"):
--   homeagent plugins install docs/examples/dice
sdk.register_tool{
  name = "dice_roll",
  description = 'Roll dice. Example: {"sides":6,"count":2}',
  parameters = { type = "object",
                 properties = { sides = { type = "integer" }, count = { type = "integer" } } },
  handler = function(args)
    local sides = args.sides or sdk.setting("default_sides")
    local total = 0
    for _ = 1, (args.count or 1) do total = total + math.random(sides) end
    return "rolled " .. total
  end,
}

sdk.register_stage("on_input", function(ctx)
  if ctx.raw_message == "roll for me" then
    return { response = "Rolled a " .. math.random(sdk.setting("default_sides")) }
  end
end)

sdk.subscribe("system", function(payload) log("info", "system event: " .. tostring(payload.kind)) end)
