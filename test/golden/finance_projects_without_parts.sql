select p.team_id, p.id as project_id from projects p
     left join project_figures pf on pf.team_id = p.team_id and pf.project_id = p.id
     where exists (
       select 1 from task_labor l join tasks t on t.team_id = l.team_id and t.id = l.task_id
       where l.team_id = p.team_id and l.project_id = p.id and t.archived_at is null
         and (l.members_json is null or not l.parts_version = coalesce(pf.parts_version, 0)))
     order by p.team_id, p.id
