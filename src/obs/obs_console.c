/*
 * obs_console.c — the live web console of a running pipeline, served beside
 * /metrics: GET /console is one page of plain HTML and SVG with a little
 * script that polls GET /api/metrics, the same registry as JSON.
 *
 * DESIGN: the JSON is made from the Prometheus text rendering of the same
 * request, so /api/metrics and /metrics can never disagree (one renderer, one
 * set of names); the page finds its series by normalised name (lower case,
 * no underscores), so it keeps working when metric names change spelling.
 * The page keeps the history it plots itself (the registry holds only the
 * current values).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "obs/obs_metrics.h"
#include "util/str.h"

/* ---- a small JSON writer (obs sits below the json component) ------------------------------ */

typedef struct ow {
	floe_buf *out;
	int rc;
	int depth;
	bool first[16];
	bool after_key;
} ow;

static void ow_init(ow *w, floe_buf *out)
{
	memset(w, 0, sizeof(*w));
	w->out = out;
}

static void ow_raw(ow *w, const char *s, size_t n)
{
	if (!w->rc)
		w->rc = floe_buf_append(w->out, s, n);
}

static void ow_sep(ow *w)
{
	if (w->after_key) {
		w->after_key = false;
		return;
	}
	if (w->depth > 0) {
		if (!w->first[w->depth])
			ow_raw(w, ",", 1);
		w->first[w->depth] = false;
	}
}

static void ow_open(ow *w, char c)
{
	ow_sep(w);
	ow_raw(w, &c, 1);
	if (w->depth < 15)
		w->first[++w->depth] = true;
	else
		w->rc = FLOE_EINVAL;
}

static void ow_close(ow *w, char c)
{
	if (w->depth > 0)
		w->depth--;
	ow_raw(w, &c, 1);
}

static void ow_escaped(ow *w, const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	ow_raw(w, "\"", 1);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		char e[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
		if (c == '"' || c == '\\') {
			e[1] = (char)c;
			ow_raw(w, e, 2);
		} else if (c == '\n') {
			ow_raw(w, "\\n", 2);
		} else if (c < 0x20) {
			ow_raw(w, e, 6);
		} else {
			ow_raw(w, (const char *)&s[i], 1);
		}
	}
	ow_raw(w, "\"", 1);
}

static void ow_strn(ow *w, const char *s, size_t n)
{
	ow_sep(w);
	ow_escaped(w, s, n);
}

static void ow_key(ow *w, const char *k)
{
	ow_sep(w);
	ow_escaped(w, k, strlen(k));
	ow_raw(w, ":", 1);
	w->after_key = true;
}

static void ow_i64(ow *w, int64_t v)
{
	char b[32];
	int n = snprintf(b, sizeof(b), "%lld", (long long)v);
	ow_sep(w);
	ow_raw(w, b, (size_t)n);
}

static void ow_double(ow *w, double v)
{
	char b[40];
	int n = snprintf(b, sizeof(b), "%.17g", v);
	ow_sep(w);
	ow_raw(w, b, (size_t)n);
}

/* ---- the text exposition format as JSON -------------------------------------------------- */

typedef struct fam {
	const char *name, *type, *help; /* into the text */
	size_t name_len, type_len, help_len;
} fam;

static size_t line_len(const char *p, const char *end)
{
	const char *nl = memchr(p, '\n', (size_t)(end - p));
	return nl ? (size_t)(nl - p) : (size_t)(end - p);
}

/* The family a sample belongs to: histogram samples end in _bucket, _sum, _count. */
static bool same_family(const fam *f, const char *s, size_t n)
{
	if (!f->name)
		return false;
	if (n == f->name_len && !memcmp(s, f->name, n))
		return true;
	static const char *suffix[] = {"_bucket", "_sum", "_count"};
	for (int i = 0; i < 3; i++) {
		size_t k = strlen(suffix[i]);
		if (n == f->name_len + k && !memcmp(s, f->name, f->name_len) &&
		    !memcmp(s + f->name_len, suffix[i], k))
			return true;
	}
	return false;
}

static void close_family(ow *w, bool *open)
{
	if (*open) {
		ow_close(w, ']');
		ow_close(w, '}');
		*open = false;
	}
}

static void open_family(ow *w, const fam *f, bool *open)
{
	ow_open(w, '{');
	ow_key(w, "name");
	ow_strn(w, f->name, f->name_len);
	ow_key(w, "type");
	ow_strn(w, f->type ? f->type : "untyped", f->type ? f->type_len : 7);
	ow_key(w, "help");
	ow_strn(w, f->help ? f->help : "", f->help ? f->help_len : 0);
	ow_key(w, "samples");
	ow_open(w, '[');
	*open = true;
}

/* One sample line: name{k="v",...} value. False when it is not one. */
static bool sample(ow *w, floe_buf *tmp, floe_buf *key, const char *p, size_t n,
		   size_t *name_len)
{
	const char *end = p + n, *q = p;
	while (q < end && *q != '{' && *q != ' ')
		q++;
	*name_len = (size_t)(q - p);
	if (!*name_len || q == end)
		return false;
	ow_open(w, '{');
	ow_key(w, "name");
	ow_strn(w, p, *name_len);
	ow_key(w, "labels");
	ow_open(w, '{');
	if (*q == '{') {
		q++;
		while (q < end && *q != '}') {
			const char *k = q;
			while (q < end && *q != '=')
				q++;
			if (q + 1 >= end || q[1] != '"')
				return false;
			floe_buf_clear(tmp);
			floe_buf_clear(key);
			if (floe_buf_append(key, k, (size_t)(q - k)))
				return false;
			ow_key(w, floe_buf_cstr(key));
			q += 2;
			while (q < end && *q != '"') {
				char c = *q++;
				if (c == '\\' && q < end) {
					c = *q++;
					c = c == 'n' ? '\n' : c;
				}
				if (floe_buf_putc(tmp, c))
					return false;
			}
			ow_strn(w, tmp->data ? (const char *)tmp->data : "", tmp->len);
			if (q < end)
				q++; /* closing quote */
			if (q < end && *q == ',')
				q++;
		}
		if (q < end)
			q++; /* } */
	}
	ow_close(w, '}');
	while (q < end && *q == ' ')
		q++;
	const char *v = q;
	while (q < end && *q != ' ')
		q++;
	ow_key(w, "value");
	int64_t iv;
	double dv;
	if (floe_parse_i64(v, (size_t)(q - v), &iv))
		ow_i64(w, iv);
	else if (floe_parse_double(v, (size_t)(q - v), &dv) && dv == dv && dv - dv == 0)
		ow_double(w, dv);
	else
		ow_strn(w, v, (size_t)(q - v)); /* +Inf, NaN */
	ow_close(w, '}');
	return true;
}

static int note_json(const char *key, const char *text, void *payload)
{
	ow_key(payload, key);
	ow_strn(payload, text, strlen(text));
	return 0;
}

int floe_obs_metrics_json(floe_metrics *r, floe_buf *out)
{
	floe_buf text, tmp, key;
	ow w;
	fam f = {0};
	bool open = false;
	floe_buf_init(&text, (size_t)64 << 20);
	floe_buf_init(&tmp, 0);
	floe_buf_init(&key, 0);
	int rc = floe_metrics_render(r, &text);
	if (rc)
		goto done;
	ow_init(&w, out);
	ow_open(&w, '{');
	ow_key(&w, "metrics");
	ow_open(&w, '[');
	const char *p = text.data ? (const char *)text.data : "", *end = p + text.len;
	while (p < end) {
		size_t n = line_len(p, end);
		if (n > 7 && !memcmp(p, "# HELP ", 7)) {
			const char *nm = p + 7, *sp = memchr(nm, ' ', n - 7);
			size_t nl = sp ? (size_t)(sp - nm) : n - 7;
			if (!(f.name_len == nl && !memcmp(f.name, nm, nl))) {
				close_family(&w, &open);
				memset(&f, 0, sizeof(f));
				f.name = nm;
				f.name_len = nl;
			}
			f.help = sp ? sp + 1 : "";
			f.help_len = sp ? n - 7 - nl - 1 : 0;
		} else if (n > 7 && !memcmp(p, "# TYPE ", 7)) {
			const char *nm = p + 7, *sp = memchr(nm, ' ', n - 7);
			size_t nl = sp ? (size_t)(sp - nm) : n - 7;
			if (!(f.name_len == nl && !memcmp(f.name, nm, nl))) {
				close_family(&w, &open);
				memset(&f, 0, sizeof(f));
				f.name = nm;
				f.name_len = nl;
			}
			f.type = sp ? sp + 1 : NULL;
			f.type_len = sp ? n - 7 - nl - 1 : 0;
		} else if (n && p[0] != '#') {
			size_t sn = 0;
			const char *q = p;
			while (q < p + n && *q != '{' && *q != ' ')
				q++;
			sn = (size_t)(q - p);
			if (!same_family(&f, p, sn)) {
				close_family(&w, &open);
				memset(&f, 0, sizeof(f));
				f.name = p;
				f.name_len = sn;
			}
			if (!open)
				open_family(&w, &f, &open);
			if (!sample(&w, &tmp, &key, p, n, &sn)) {
				rc = FLOE_ECORRUPT;
				goto done;
			}
		}
		p += n + (p + n < end);
	}
	close_family(&w, &open);
	ow_close(&w, ']');
	ow_key(&w, "notes");
	ow_open(&w, '{');
	rc = floe_metrics_notes(r, note_json, &w);
	ow_close(&w, '}');
	ow_close(&w, '}');
	if (!rc)
		rc = w.rc;
	if (!rc)
		rc = floe_buf_putc(out, '\n');
done:
	floe_buf_reset(&text);
	floe_buf_reset(&tmp);
	floe_buf_reset(&key);
	return rc;
}

/* ---- the page ----------------------------------------------------------------------------- */

/* the page, in pieces (C compilers need not take string literals over 4 KB) */
static const char *const CONSOLE_HTML[] = {
	"<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>floe console</title>\n",
	"<style>body{font-family:sans-serif;margin:1em 2em;background:#fafafa}",
	"h1{font-size:20px}h2{font-size:16px;margin:18px 0 6px}",
	".panels{display:flex;flex-wrap:wrap}.panel{background:#fff;border:1px solid #ddd;",
	"margin:6px;padding:6px 10px;width:400px;min-height:150px}",
	".panel h3{font-size:13px;margin:0 0 4px}.v{font-size:13px;margin:2px 0}",
	"svg{background:#fcfcff}table.tps{font-size:12px;border-collapse:collapse}",
	".tps td,.tps th{padding:1px 6px;text-align:right}</style></head><body>\n",
	"<h1>floe console <span id=\"status\">connecting...</span></h1>\n",
	"<div id=\"pipeline\"></div><div id=\"tables\"></div>\n",
	"<script>\n",
	"'use strict';\n",
	"const N = s => s.toLowerCase().replace(/_/g, '');\n",
	"const hist = {}; const HMAX = 300;\n",
	"function esc(s){return String(s).replace(/[&<>\"]/g,c=>({'&':'&amp;','<':'&lt;','>':'&gt;','\"':'&quot;'}[c]));}\n",
	"function fmt(v){if(typeof v!=='number')return String(v);if(Math.abs(v)>=1e9)return (v/1e9).toFixed(2)+'G';",
	"if(Math.abs(v)>=1e6)return (v/1e6).toFixed(2)+'M';if(Math.abs(v)>=1e4)return (v/1e3).toFixed(1)+'k';",
	"return Number.isInteger(v)?String(v):v.toFixed(2);}\n",
	"function find(ms, pat, lab, key){const out=[];for(const m of ms)for(const s of m.samples){",
	"if(!pat.test(N(s.name)))continue;if(lab&&s.labels[key]!==lab)continue;out.push(s);}return out;}\n",
	"function val(ms, pat, lab, key){const s=find(ms,pat,lab,key);",
	"return s.length?s.reduce((a,x)=>a+(typeof x.value==='number'?x.value:0),0):null;}\n",
	"function push(k,t,v){if(v===null)return;(hist[k]=hist[k]||[]).push([t,v]);if(hist[k].length>HMAX)hist[k].shift();}\n",
	"function rate(k){const h=hist[k]||[];if(h.length<2)return null;const a=h[h.length-2],b=h[h.length-1];",
	"return b[0]>a[0]?(b[1]-a[1])/((b[0]-a[0])/1000):null;}\n",
	"function line(k, w, h){const d=hist[k]||[];if(!d.length)return '';let lo=Infinity,hi=-Infinity;",
	"for(const p of d){lo=Math.min(lo,p[1]);hi=Math.max(hi,p[1]);}if(hi===lo){hi=lo+1;}",
	"const t0=d[0][0],t1=Math.max(d[d.length-1][0],t0+1);",
	"const pts=d.map(p=>((p[0]-t0)/(t1-t0)*(w-10)+5).toFixed(1)+','+(h-5-(p[1]-lo)/(hi-lo)*(h-20)).toFixed(1)).join(' ');",
	"return '<svg class=\"series\" width=\"'+w+'\" height=\"'+h+'\"><polyline fill=\"none\" stroke=\"#4a7ebb\" points=\"'+pts+'\"/>",
	"<text x=\"2\" y=\"11\" font-size=\"10\">'+fmt(hi)+'</text><text x=\"2\" y=\"'+(h-1)+'\" font-size=\"10\">'+fmt(lo)+'</text></svg>';}\n",
	"function bars(bk, w, h){let prev=0;const cs=bk.map(b=>{const c=b.value-prev;prev=b.value;return [b.labels.le,c];});",
	"const mx=Math.max(1,...cs.map(c=>c[1]));const bw=(w-10)/Math.max(1,cs.length);let s='<svg class=\"hist\" width=\"'+w+'\" height=\"'+(h+14)+'\">';",
	"cs.forEach((c,i)=>{const bh=c[1]/mx*(h-14);s+='<rect class=\"bar\" x=\"'+(5+i*bw+1).toFixed(1)+'\" y=\"'+(h-bh).toFixed(1)+",
	"'\" width=\"'+(bw-2).toFixed(1)+'\" height=\"'+bh.toFixed(1)+'\" fill=\"#4a7ebb\"><title>le '+esc(c[0])+': '+c[1]+'</title></rect>';",
	"s+='<text x=\"'+(5+i*bw+bw/2).toFixed(1)+'\" y=\"'+(h+11)+'\" font-size=\"8\" text-anchor=\"middle\">'+esc(c[0]==='+Inf'?'inf':fmt(Number(c[0])))+'</text>';});",
	"return s+'</svg>';}\n",
	"function panel(id, title, body){return '<div class=\"panel\" id=\"'+id+'\" data-populated=\"'+(body?'true':'false')+'\"><h3>'+title+'</h3>'+(body||'<div class=\"v\">no data yet</div>')+'</div>';}\n",
	"function v(label, x){return '<div class=\"v\">'+label+': <b>'+(x===null||x===undefined?'-':fmt(x))+'</b></div>';}\n",
	"function whole(ms, pat, src){const x=find(ms,pat,src,'source').filter(q=>q.labels.partition===undefined&&q.labels.shard===undefined);",
	"return x.length?x.reduce((a,q)=>a+(typeof q.value==='number'?q.value:0),0):null;}\n",
	"function num(x){return x===undefined||x===null?'-':esc(String(x));}\n",
	"const PART_COLS={lag:'lag',committedoffset:'committed',millisbehindlatest:'behind',recordsread:'read',offset:'offset'};\n",
	"function parts(ms, src){const tps={};let kin=false;",
	"for(const q of find(ms,/(partition(recordslag|offset|committedoffset)|shard(recordsread|millisbehindlatest))$/,src,'source')){",
	"const part=q.labels.partition!==undefined?q.labels.partition:q.labels.shard;if(part===undefined)continue;",
	"const topic=q.labels.topic!==undefined?q.labels.topic:(q.labels.stream||'');kin=kin||q.labels.shard!==undefined;",
	"const e=tps[topic+'\\u0000'+part]=tps[topic+'\\u0000'+part]||{topic:topic,partition:part};const n=N(q.name);",
	"for(const c in PART_COLS)if(n.endsWith(c)){e[PART_COLS[c]]=q.value;break;}}",
	"const ks=Object.values(tps).sort((a,b)=>a.topic<b.topic?-1:a.topic>b.topic?1:String(a.partition).localeCompare(String(b.partition),undefined,{numeric:true}));",
	"if(!ks.length)return '';const cols=kin?[['stream','shard'],['read','records read'],['behind','ms behind latest']]:",
	"[['topic','partition'],['offset','offset'],['committed','committed'],['lag','lag']];",
	"let h='<table class=\"tps\"><tr><th>'+cols[0][0]+'</th><th>'+cols[0][1]+'</th>'+cols.slice(1).map(c=>'<th>'+c[1]+'</th>').join('')+'</tr>';",
	"for(const e of ks)h+='<tr class=\"tp\" data-topic=\"'+esc(e.topic)+'\" data-partition=\"'+esc(e.partition)+'\"><td>'+esc(e.topic)+'</td><td>'+esc(e.partition)+'</td>'+",
	"cols.slice(1).map(c=>'<td class=\"'+c[0]+'\">'+num(e[c[0]])+'</td>').join('')+'</tr>';",
	"return h+'</table>';}\n",
	"let notes={};\n"
	"function render(ms){const t=Date.now();const tables=new Set(),sources=new Set();",
	"for(const m of ms)for(const s of m.samples){if(s.labels.table)tables.add(s.labels.table);if(s.labels.source)sources.add(s.labels.source);}",
	"const ck=val(ms,/^floecheckpoints(total)?$/),ckid=val(ms,/lastcheckpointid/);push('ck',t,ck);",
	"let top='<div class=\"panels\">';",
	"let src='';for(const s of sources){const ri=val(ms,/(num)?recordsin(total)?$/,s,'source'),bi=val(ms,/(num)?bytesin(total)?$/,s,'source');",
	"push('in:'+s,t,ri);push('bin:'+s,t,bi);src+=v(esc(s)+' records in',ri)+v('bytes in',bi)+v('records/s',rate('in:'+s))+v('bytes/s',rate('bin:'+s));",
	"const lag=whole(ms,/lag/,s),off=whole(ms,/offset/,s),behind=whole(ms,/millisbehindlatest/,s);",
	"if(lag!==null)src+=v('lag',lag);if(off!==null)src+=v('offset',off);if(behind!==null)src+=v('ms behind latest',behind);",
	"src+=parts(ms,s);}",
	"top+=panel('panel-checkpoints','checkpoints',ck===null?'':v('completed',ck)+v('last id',ckid)+line('ck',380,70));",
	"top+=panel('panel-sources','sources: offsets, records/s, bytes/s, lag',src);",
	"let dl='';for(const s of sources)dl+=v(esc(s)+' dead-lettered',val(ms,/(num)?recordsdeadlettered(total)?$/,s,'source'));",
	"top+=panel('panel-deadletters','dead letters',dl);top+='</div>';",
	"document.getElementById('pipeline').innerHTML=top;let html='';",
	"for(const tb of tables){const L=(p)=>val(ms,p,tb,'table');const k=x=>x+':'+tb;",
	"const cd=L(/lastcommitdurationms/),fd=L(/lastflushdurationms/),files=L(/committeddatafiles(count|total)$/),recs=L(/(num)?recordsout(total)?$/),",
	"bytes=L(/committeddatafiles(bytecount|bytestotal)$/),el=L(/elapsedsecondssincelastsuccessfulcommit/);",
	"push(k('cd'),t,cd);push(k('recs'),t,recs);push(k('bytes'),t,bytes);push(k('files'),t,files);",
	"const fh=hist[k('files')]||[],ch=hist['ck']||[];let fpc=null;if(fh.length>1&&ch.length>1){const dc=ch[ch.length-1][1]-ch[0][1];",
	"if(dc>0)fpc=(fh[fh.length-1][1]-fh[0][1])/dc;}if(fpc===null&&ck)fpc=files/ck;push(k('fpc'),t,fpc);",
	"const bk=find(ms,/(datafilessizehistogram|datafilesizebytes)bucket$/,tb,'table');",
	"const del=find(ms,/delete/,tb,'table');",
	"const mr=L(/maintenanceruns(total)?$/),mf=L(/maintenancefailures/),md=L(/maintenancelastrundurationms/),mw=L(/maintenancedatafilesrewritten/),",
	"lw=L(/maintenancelockwaits/);",
	"html+='<h2>'+esc(tb)+'</h2><div class=\"panels\">';",
	"html+=panel('panel-commits','commit duration (ms) over time',cd===null?'':v('last commit ms',cd)+v('last flush ms',fd)+v('seconds since last commit',el)+line(k('cd'),380,70));",
	"html+=panel('panel-throughput','records/s and bytes/s',recs===null?'':v('records committed',recs)+v('records/s',rate(k('recs')))+v('bytes/s',rate(k('bytes')))+line(k('recs'),380,60));",
	"html+=panel('panel-files','files per commit',files===null?'':v('data files committed',files)+v('files per commit',fpc)+line(k('fpc'),380,60));",
	"html+=panel('panel-sizes','file size histogram (bytes, le)',bk.length?bars(bk,380,90):'');",
	"html+=panel('panel-deletes','delete files',del.length?del.map(s=>v(esc(s.name),s.value)).join(''):v('delete files committed (no delete metric: append-only)',0));",
	"const dn=notes['dead-letter:'+tb];"
	"html+=panel('panel-deadletters-table','dead letters for this table',v('records dead-lettered',L(/numrecordsdeadletteredtable/))+"
	"(dn?'<div class=\"v reason\">latest: '+esc(dn)+'</div>':''));",
	"html+=panel('panel-maintenance','maintenance runs and what they did',mr===null?v('embedded maintenance','off'):v('runs',mr)+v('failures',mf)+v('last run ms',md)+v('data files rewritten',mw));",
	"const lk=notes['maintenance-lock:'+tb];"
	"html+=panel('panel-lock','maintenance lock',mr===null?v('lock','not used (maintenance off)'):v('runs put off: another maintainer held the lock',lw)+"
	"'<div class=\"v holder\">holder: '+(lk?esc(lk):'none seen yet')+'</div>');",
	"html+='</div>';}",
	"document.getElementById('tables').innerHTML=html;}\n",
	"async function tick(){try{const r=await fetch('/api/metrics',{cache:'no-store'});const j=await r.json();notes=j.notes||{};render(j.metrics);",
	"const st=document.getElementById('status');st.textContent='live '+new Date().toISOString().slice(11,19)+' UTC';st.dataset.ok='true';}",
	"catch(e){document.getElementById('status').textContent='disconnected: '+e;}}\n",
	"tick();setInterval(tick,1000);\n",
	"</script></body></html>\n",
	NULL};

bool floe_obs_console_route(floe_metrics *r, const char *url, floe_buf *out, const char **type,
			    unsigned int *status, int *rc)
{
	if (!strcmp(url, "/console") || !strcmp(url, "/console/")) {
		*type = "text/html; charset=utf-8";
		*rc = 0;
		for (size_t i = 0; CONSOLE_HTML[i] && !*rc; i++)
			*rc = floe_buf_puts(out, CONSOLE_HTML[i]);
		return true;
	}
	if (!strcmp(url, "/api/metrics") || !strcmp(url, "/api") || !strcmp(url, "/api/")) {
		*type = "application/json";
		*rc = floe_obs_metrics_json(r, out);
		if (*rc) {
			floe_buf_clear(out);
			*status = 500;
			*type = "text/plain; charset=utf-8";
			*rc = floe_buf_puts(out, "cannot render the metrics\n");
		}
		return true;
	}
	return false;
}
