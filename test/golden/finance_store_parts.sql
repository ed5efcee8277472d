update task_labor l
     set members_json = s.members_json, grouped_members_json = s.grouped_members_json, warnings_json = s.warnings_json, parts_version = s.parts_version
     from (
       select w.task_id, r.members_json, r.grouped_members_json, r.warnings_json, r.parts_version
       from json_to_recordset(cast(:parts as json)) as r (task_id uuid, version text, parts_version bigint, members_json text, grouped_members_json text, warnings_json text)
       join task_labor w on w.team_id = :teamId and w.task_id = r.task_id
       where w.xmin = cast(r.version as xid) and (w.members_json is null or w.parts_version <> r.parts_version)
       for update of w skip locked
     ) s
     where l.team_id = :teamId and l.task_id = s.task_id
