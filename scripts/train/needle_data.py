"""Deterministic tool-calling conversations for needle-nano.

Every conversation draws its own variant of each tool: names and parameter names from variant
pools or made-up nonsense words, shuffled tool order, different enum values, tools from other
domains mixed in. The query states the argument values literally, so the call copies them; the
only way to know the tool and parameter names is to read the tool block (the pinned sinks).

A conversation is a dict in the evaluation-suite format (issue 6), plus a `reply` per turn:
  {"tools": [...], "system": "...", "turns": [{"query", "answers": [{"name","arguments"}],
   "result", "reply"}]}
"""

import json
import random

import needle_aux
import word_overlap

# Value pools are split: items at index % 5 == 4 only appear in evaluation ("held-out values").
EVAL_EVERY = 5


def split_pool(items, split):
    if split == "eval":
        return [x for i, x in enumerate(items) if i % EVAL_EVERY == EVAL_EVERY - 1]
    return [x for i, x in enumerate(items) if i % EVAL_EVERY != EVAL_EVERY - 1]


ROOMS = ["kitchen", "bedroom", "living room", "hall", "bathroom", "office", "garage", "attic",
         "dining room", "nursery", "study", "basement", "porch", "guest room", "laundry room"]
DOORS = ["front", "back", "garage", "side", "patio", "cellar", "gate", "balcony", "shed", "porch"]
PEOPLE = ["Anna", "Ben", "Clara", "David", "Emma", "Felix", "Grace", "Hugo", "Ines", "Jonas",
          "Karim", "Lena", "Marco", "Nora", "Oscar", "Paula", "Quinn", "Rosa", "Sami", "Tara",
          "Umar", "Vera", "Wim", "Xena", "Yusuf", "Zoe", "Milo", "Ada", "Leo", "Iris"]
DOMAINS_MAIL = ["mail.com", "example.org", "post.net", "inbox.io", "work.dev"]
CITIES = ["Paris", "Berlin", "Madrid", "Rome", "Lisbon", "Vienna", "Prague", "Oslo", "Dublin",
          "Warsaw", "Athens", "Zurich", "Tokyo", "Boston", "Denver", "Seattle", "Lima", "Cairo",
          "Nairobi", "Sydney", "Toronto", "Chicago", "Miami", "Austin", "Munich"]
TOPICS = ["beach", "birthday", "mountains", "dog", "wedding", "sunset", "garden", "snow",
          "concert", "family", "forest", "city", "lake", "cat", "picnic", "museum", "boat"]
SUBJECTS = ["meeting notes", "lunch plans", "project update", "invoice", "weekend trip",
            "quarterly report", "team dinner", "new schedule", "holiday photos", "contract draft"]
BODIES = ["see you at noon", "the file is attached", "please call me back", "thanks for the help",
          "running late today", "the room is booked", "all good on my side", "can we move it"]
ITEMS = ["milk", "eggs", "bread", "apples", "rice", "coffee", "butter", "cheese", "tomatoes",
         "onions", "pasta", "honey", "lemons", "yogurt", "carrots", "tea", "flour", "salt"]
VENDORS = ["Acme Tools", "Blue River", "Northwind", "Globex", "Initech", "Umbrella Foods",
           "Stark Supply", "Wayne Paper", "Hooli Cloud", "Vandelay Trade"]
CURRENCIES = ["EUR", "USD", "JPY", "GBP", "CHF", "CAD", "AUD", "SEK", "NOK", "PLN", "INR", "CNY"]
REVIEWS_POS = ["I loved every minute of it", "great service and friendly staff",
               "works perfectly, very happy", "best purchase this year", "fantastic quality"]
REVIEWS_NEG = ["it broke after two days", "terrible support, never again",
               "the food was cold and bland", "a complete waste of money", "very disappointing"]
REVIEWS_NEU = ["it arrived on Tuesday", "the box contains two parts", "it is blue and medium size",
               "delivery took a week", "the manual is in English"]
APPS = ["camera", "maps", "music", "notes", "calendar", "browser", "weather", "clock"]
SONGS = ["Blue Moon", "Red Sky", "Night Train", "Summer Rain", "Old Road", "Gold Rush"]
ARTISTS = ["The Owls", "Nina Day", "Max Bell", "Echo Park", "Lia Stone"]
EVENTS = ["dentist", "team sync", "yoga class", "book club", "piano lesson", "budget review"]

OFF_TOPIC = [
    ("What is the capital of France?", "Paris is the capital of France."),
    ("Tell me a joke.", "Why did the robot cross the road? It was programmed to."),
    ("How are you today?", "I am fine, thank you."),
    ("Who wrote Hamlet?", "William Shakespeare wrote Hamlet."),
    ("What does a cat say?", "A cat says meow."),
    ("Can you write a short poem?", "Leaves fall, the wind sings, autumn comes."),
    ("What is two plus two?", "Two plus two is four."),
    ("Thanks, that was helpful.", "You are welcome."),
    ("Good morning!", "Good morning! How can I help?"),
    ("What colour is the sky?", "The sky is usually blue."),
    ("Why is the sea salty?", "Rivers carry minerals into the sea."),
    ("Do you like music?", "I do not listen to music, but I can help with your tools."),
    ("What is your name?", "I am a small assistant."),
    ("How many days are in a week?", "There are seven days in a week."),
    ("Explain gravity in one line.", "Gravity pulls masses toward each other."),
    ("Is it going to be a good day?", "I hope so!"),
    ("Recommend a book.", "Try a classic novel you have not read yet."),
    ("What time zone is London in?", "London uses GMT, or BST in summer."),
    ("Say hello in Spanish.", "Hola!"),
    ("Never mind.", "Alright."),
    ("How tall is Mount Everest?", "About 8,849 metres."),
    ("What is the boiling point of water?", "100 degrees Celsius at sea level."),
    ("Who painted the Mona Lisa?", "Leonardo da Vinci."),
    ("Can you keep a secret?", "I do not store anything after this chat."),
    ("What should I cook tonight?", "Maybe a simple pasta."),
]
OFF_TOPIC_EVAL = [
    ("What is the largest planet?", "Jupiter is the largest planet."),
    ("Sing me something.", "La la la!"),
    ("Where do penguins live?", "Mostly in the southern hemisphere."),
    ("How do I say thanks in French?", "Merci."),
    ("What is the speed of light?", "About 300,000 km per second."),
]

REPLIES_DONE = ["Done.", "All set.", "Okay, done.", "Finished.", "It is done.", "Sure, done."]

SYLLABLES = ["ka", "zu", "mo", "ri", "ple", "tox", "vin", "dra", "qua", "bel", "sno", "fi", "gar",
             "lu", "wem", "yo", "cre", "nix", "pa", "tor", "ul", "brim", "sa", "ko", "zet", "mi"]


def nonsense_word(rng, parts=None):
    return "".join(rng.choice(SYLLABLES) for _ in range(parts or rng.randint(2, 3)))


def nonsense_name(rng):
    if rng.random() < 0.5:
        return nonsense_word(rng)
    return nonsense_word(rng, 2) + "_" + nonsense_word(rng, 2)


class Param:
    """One parameter: its variant names, JSON type, description variants and value sampler."""

    def __init__(self, names, ptype, descs, sample, enum=None, required=True, items=None):
        self.names = names
        self.ptype = ptype
        self.descs = descs
        self.sample = sample  # (rng, split, variant) -> (value, phrase used in the query)
        self.enum = enum  # list of variant lists: each conversation picks one list
        self.required = required
        self.items = items


class Tool:
    def __init__(self, names, descs, params, queries):
        self.names = names
        self.descs = descs
        self.params = params  # canonical key -> Param
        # Query templates: {key} slots hold the phrase of that argument; a template lists only the
        # keys it mentions, so optional arguments are present exactly when their slot is.
        self.queries = queries


def pick(pool):
    return lambda rng, split, variant: (lambda v: (v, v))(rng.choice(split_pool(pool, split)))


def integer(lo, hi):
    return lambda rng, split, variant: (lambda v: (v, str(v)))(rng.randint(lo, hi))


def decimal(lo, hi):
    def sample(rng, split, variant):
        v = rng.randint(lo, hi) if rng.random() < 0.6 else round(rng.uniform(lo, hi), 1)
        if isinstance(v, float) and v.is_integer():
            v = int(v)
        return v, str(v)
    return sample


def boolean(true_words, false_words):
    def sample(rng, split, variant):
        v = rng.random() < 0.5
        return v, rng.choice(true_words if v else false_words)
    return sample


def enum_value(phrases):
    """Enum arguments: the query says a word meaning the canonical choice; the call uses this
    conversation's spelling of that choice (phrases: canonical index -> query words)."""
    def sample(rng, split, variant):
        i = rng.randrange(len(variant))
        return variant[i], rng.choice(phrases[i])
    return sample


def email_address(rng, split, variant):
    v = rng.choice(split_pool(PEOPLE, split)).lower() + "@" + rng.choice(DOMAINS_MAIL)
    return v, v


def clock_time(rng, split, variant):
    v = "%02d:%02d" % (rng.randint(5, 22), rng.choice([0, 15, 30, 45]))
    return v, v


def date_value(rng, split, variant):
    v = "2026-%02d-%02d" % (rng.randint(1, 12), rng.randint(1, 28))
    return v, v


def photo_id(rng, split, variant):
    v = "IMG_%d" % rng.randint(1000, 9999)
    return v, v


def item_list(rng, split, variant):
    pool = split_pool(ITEMS, split)
    v = rng.sample(pool, min(len(pool), rng.randint(2, 4)))
    return v, ", ".join(v[:-1]) + " and " + v[-1]


def people_list(rng, split, variant):
    v = rng.sample(split_pool(PEOPLE, split), rng.randint(2, 3))
    return v, ", ".join(v[:-1]) + " and " + v[-1]


def review(pool_index):
    def sample(rng, split, variant):
        pools = [REVIEWS_POS, REVIEWS_NEG, REVIEWS_NEU]
        v = rng.choice(pools[pool_index])
        return v, v
    return sample


UNIT_ENUM = [["celsius", "fahrenheit"], ["C", "F"], ["metric", "imperial"], ["c", "f"]]
DIRECTION_ENUM = [["forward", "backward", "left", "right"], ["fwd", "back", "left", "right"],
                  ["ahead", "reverse", "port", "starboard"], ["north", "south", "west", "east"]]
GRIP_ENUM = [["open", "close"], ["release", "grab"], ["loosen", "tighten"]]
SENTIMENT_ENUM = [["positive", "negative", "neutral"], ["pos", "neg", "neu"],
                  ["good", "bad", "mixed"], ["happy", "unhappy", "flat"], ["up", "down", "level"]]
CABIN_ENUM = [["economy", "business", "first"], ["coach", "premium", "first"], ["eco", "biz", "top"]]
PRIORITY_ENUM = [["low", "normal", "high"], ["minor", "medium", "urgent"], ["p3", "p2", "p1"]]

# Domain -> tools. Canonical parameter keys are internal; every conversation renames them.
DOMAINS = {
    "smart_home": [
        Tool(["set_light", "set_lights", "light_control", "switch_light", "lamp_set", "toggle_light"],
             ["Turn the lights of a room on or off.", "Switch a room's lights.", "Control room lighting."],
             {"room": Param(["room", "location", "area", "zone", "place"], "string", ["Room name"], pick(ROOMS)),
              "on": Param(["on", "state", "power", "enabled"], "boolean", ["true for lights on"],
                          boolean(["on", "up"], ["off", "out"]))},
             ["Turn {on} the lights in the {room}.", "Switch the {room} lights {on}.",
              "Please turn {on} the {room} light.", "Lights {on} in the {room}, please.",
              "Can you switch {on} the lamp in the {room}?"]),
        Tool(["set_thermostat", "set_temperature", "heating_set", "climate_target", "thermo"],
             ["Set the target temperature.", "Change the heating temperature.", "Set the thermostat."],
             {"temperature": Param(["temperature", "temp", "degrees", "target", "value"], "number",
                                   ["Target temperature"], decimal(15, 28)),
              "unit": Param(["unit", "scale", "units"], "string", ["Temperature unit"],
                            enum_value([["celsius"], ["fahrenheit"]]), enum=UNIT_ENUM)},
             ["Set the heating to {temperature} degrees {unit}.", "Make it {temperature} degrees {unit}.",
              "Change the temperature to {temperature} {unit}.", "I want {temperature} degrees {unit} inside."]),
        Tool(["lock_door", "door_lock", "set_lock", "secure_door", "lock"],
             ["Lock or unlock a door.", "Control a door lock."],
             {"door": Param(["door", "which", "entrance", "name"], "string", ["Which door"], pick(DOORS)),
              "locked": Param(["locked", "lock", "secure", "state"], "boolean", ["true to lock"],
                              boolean(["lock"], ["unlock"]))},
             ["Please {locked} the {door} door.", "{locked} the {door} door.", "Can you {locked} the {door} door?"]),
    ],
    "robot": [
        Tool(["move_robot", "drive", "move", "robot_move", "go"],
             ["Move the robot in a direction.", "Drive the robot a distance.", "Move the base."],
             {"direction": Param(["direction", "dir", "heading", "way"], "string", ["Direction"],
                                 enum_value([["forward"], ["backward", "back"], ["left"], ["right"]]),
                                 enum=DIRECTION_ENUM),
              "distance": Param(["distance", "meters", "steps", "length", "amount"], "number",
                                ["Distance in meters"], decimal(1, 20))},
             ["Move {direction} {distance} meters.", "Go {direction} for {distance} meters.",
              "Drive the robot {direction} by {distance}.", "Robot, move {distance} meters {direction}."]),
        Tool(["rotate", "turn_robot", "spin", "rotate_base", "yaw"],
             ["Rotate the robot by an angle.", "Turn in place."],
             {"angle": Param(["angle", "degrees", "deg", "turn"], "integer", ["Angle in degrees"], integer(5, 355))},
             ["Rotate by {angle} degrees.", "Turn {angle} degrees.", "Spin the robot {angle} degrees."]),
        Tool(["gripper", "grip", "set_gripper", "claw", "hand"],
             ["Open or close the gripper.", "Control the claw."],
             {"action": Param(["action", "mode", "command", "state"], "string", ["Gripper action"],
                              enum_value([["open"], ["close"]]), enum=GRIP_ENUM)},
             ["{action} the gripper.", "Please {action} the claw.", "Gripper: {action}."]),
    ],
    "photos": [
        Tool(["search_photos", "find_photos", "photo_search", "lookup_images", "gallery_find"],
             ["Search the photo gallery.", "Find photos by keyword."],
             {"query": Param(["query", "keyword", "text", "term", "about"], "string", ["What to look for"], pick(TOPICS)),
              "year": Param(["year", "taken_in", "yr"], "integer", ["Year taken"], integer(2005, 2025), required=False)},
             ["Show me photos of {query}.", "Find my {query} pictures.", "Find photos of {query} from {year}.",
              "Search for {query} photos taken in {year}.", "Any pictures with {query}?"]),
        Tool(["create_album", "new_album", "make_album", "album_create"],
             ["Create a photo album.", "Make a new album."],
             {"title": Param(["title", "name", "album", "label"], "string", ["Album name"], pick(TOPICS))},
             ["Create an album called {title}.", "Make a new album named {title}.", "New album: {title}."]),
        Tool(["share_photo", "send_photo", "photo_share", "share_image"],
             ["Share a photo with someone.", "Send a picture to a person."],
             {"photo": Param(["photo", "photo_id", "image", "id", "file"], "string", ["Photo id"], photo_id),
              "to": Param(["to", "recipient", "person", "with", "contact"], "string", ["Recipient name"], pick(PEOPLE))},
             ["Share {photo} with {to}.", "Send {photo} to {to}.", "Please send photo {photo} to {to}."]),
    ],
    "device": [
        Tool(["set_volume", "volume", "audio_level", "sound_set", "change_volume"],
             ["Set the volume level.", "Change the sound level."],
             {"level": Param(["level", "volume", "value", "percent"], "integer", ["Volume 0 to 100"], integer(0, 100))},
             ["Set the volume to {level}.", "Volume {level} please.", "Change the sound level to {level}."]),
        Tool(["toggle_wifi", "wifi", "set_wifi", "network_switch"],
             ["Turn wifi on or off.", "Switch the wireless network."],
             {"enabled": Param(["enabled", "on", "state", "active"], "boolean", ["true for wifi on"],
                               boolean(["on", "enable"], ["off", "disable"]))},
             ["Turn wifi {enabled}.", "Switch the wifi {enabled}.", "Please {enabled} the wifi."]),
        Tool(["set_alarm", "alarm", "wake_me", "create_alarm", "alarm_set"],
             ["Set an alarm.", "Create a wake-up alarm."],
             {"time": Param(["time", "at", "when", "hour"], "string", ["Alarm time HH:MM"], clock_time)},
             ["Set an alarm for {time}.", "Wake me up at {time}.", "Alarm at {time} please."]),
        Tool(["open_app", "launch", "start_app", "run_app"],
             ["Open an app.", "Launch an application."],
             {"app": Param(["app", "name", "application", "program"], "string", ["App name"], pick(APPS))},
             ["Open the {app} app.", "Launch {app}.", "Start {app} for me."]),
    ],
    "email": [
        Tool(["send_email", "email", "mail_send", "compose", "write_mail"],
             ["Send an email.", "Write and send a message by email."],
             {"to": Param(["to", "recipient", "address", "email"], "string", ["Recipient address"], email_address),
              "subject": Param(["subject", "title", "topic"], "string", ["Subject line"], pick(SUBJECTS)),
              "body": Param(["body", "text", "message", "content"], "string", ["Message text"], pick(BODIES))},
             ["Email {to} with subject {subject} saying {body}.",
              "Send a mail to {to}, subject {subject}, text: {body}.",
              "Write to {to} about {subject}: {body}."]),
        Tool(["search_email", "find_mail", "inbox_search", "mail_lookup"],
             ["Search the inbox.", "Find emails."],
             {"sender": Param(["sender", "from", "author"], "string", ["Sender name"], pick(PEOPLE)),
              "keyword": Param(["keyword", "query", "term", "about"], "string", ["Search word"], pick(SUBJECTS),
                               required=False)},
             ["Find emails from {sender}.", "Search mail from {sender} about {keyword}.",
              "Any messages from {sender} on {keyword}?"]),
    ],
    "currency": [
        Tool(["convert_currency", "convert", "fx_convert", "exchange", "money_convert"],
             ["Convert money between currencies.", "Convert an amount of money."],
             {"amount": Param(["amount", "value", "sum", "money"], "number", ["Amount to convert"], decimal(1, 5000)),
              "from": Param(["from", "source", "from_currency", "base"], "string", ["Source currency"], pick(CURRENCIES)),
              "to": Param(["to", "target", "to_currency", "quote"], "string", ["Target currency"], pick(CURRENCIES))},
             ["Convert {amount} {from} to {to}.", "How much is {amount} {from} in {to}?",
              "Change {amount} {from} into {to}.", "What do I get in {to} for {amount} {from}?"]),
        Tool(["get_rate", "exchange_rate", "fx_rate", "rate_lookup"],
             ["Get an exchange rate.", "Look up a currency rate."],
             {"base": Param(["base", "from", "currency"], "string", ["Base currency"], pick(CURRENCIES)),
              "quote": Param(["quote", "to", "against"], "string", ["Quoted currency"], pick(CURRENCIES))},
             ["What is the {base} to {quote} rate?", "Rate of {base} against {quote}?",
              "Look up {base} {quote} exchange rate."]),
    ],
    "extraction": [
        Tool(["extract_invoice", "save_invoice", "record_invoice", "log_bill", "invoice_fields"],
             ["Record the fields of an invoice.", "Store invoice details from a text."],
             {"vendor": Param(["vendor", "company", "seller", "supplier"], "string", ["Vendor name"], pick(VENDORS)),
              "total": Param(["total", "amount", "sum", "price"], "number", ["Total amount"], decimal(10, 9000)),
              "date": Param(["date", "due", "issued", "day"], "string", ["Invoice date"], date_value)},
             ["Save this: Hi, attached is the bill from {vendor} dated {date}. The total due is {total}. Thanks!",
              "Extract the invoice: {vendor} sent us a bill on {date} for {total} in total.",
              "Record this mail. Dear team, {vendor} invoiced {total} on {date}. Best regards.",
              "From the email below, log the invoice. Invoice by {vendor}, date {date}, amount {total}."]),
    ],
    "sentiment": [
        Tool(["classify_sentiment", "record_sentiment", "label_review", "tag_mood", "rate_text"],
             ["Label the sentiment of a review.", "Classify a text as a mood."],
             {"label": Param(["label", "sentiment", "class", "mood"], "string", ["Sentiment"],
                             None, enum=SENTIMENT_ENUM)},
             ["Classify this review: {label}", "What is the sentiment of: {label}",
              "Label this text: {label}", "Tag the mood of this comment: {label}"]),
    ],
    "lists": [
        Tool(["add_items", "shopping_add", "add_to_list", "list_add", "cart_add"],
             ["Add items to the shopping list.", "Put things on the list."],
             {"items": Param(["items", "things", "products", "entries"], "array", ["List of items"], item_list,
                             items="string")},
             ["Add {items} to my list.", "Put {items} on the shopping list.", "I need {items}."]),
        Tool(["invite", "send_invites", "invite_people", "add_guests"],
             ["Invite people to an event.", "Send invitations."],
             {"people": Param(["people", "guests", "names", "invitees"], "array", ["Guest names"], people_list,
                              items="string"),
              "event": Param(["event", "occasion", "what"], "string", ["Event name"], pick(EVENTS))},
             ["Invite {people} to the {event}.", "Send {people} an invite for {event}."]),
    ],
    "flights": [
        Tool(["search_flights", "find_flights", "flight_search", "book_lookup", "flights"],
             ["Search for flights.", "Find flights between two cities."],
             {"origin": Param(["origin", "from", "departure", "src"], "string", ["Departure city"], pick(CITIES)),
              "destination": Param(["destination", "to", "arrival", "dst"], "string", ["Arrival city"], pick(CITIES)),
              "date": Param(["date", "day", "when", "depart_on"], "string", ["Departure date"], date_value),
              "passengers": Param(["passengers", "adults", "people", "seats"], "integer", ["Number of passengers"],
                                  integer(1, 6), required=False),
              "cabin": Param(["cabin", "class", "fare"], "string", ["Cabin class"],
                             enum_value([["economy"], ["business"], ["first"]]), enum=CABIN_ENUM, required=False),
              "max_price": Param(["max_price", "budget", "price_limit"], "integer", ["Max price"],
                                 integer(100, 2000), required=False)},
             ["Find flights from {origin} to {destination} on {date}.",
              "Flights {origin} to {destination} on {date} for {passengers} people.",
              "I need a {cabin} flight from {origin} to {destination} on {date}.",
              "Search {origin} to {destination}, {date}, under {max_price}.",
              "Fly me from {origin} to {destination} on {date}, {passengers} seats in {cabin}."]),
    ],
}

# Whole domains never used in training (issue 6: held-out domains).
HELDOUT_DOMAINS = {
    "music": [
        Tool(["play_song", "play", "music_play", "start_song"], ["Play a song."],
             {"title": Param(["title", "song", "track"], "string", ["Song title"], pick(SONGS)),
              "artist": Param(["artist", "by", "band"], "string", ["Artist"], pick(ARTISTS), required=False)},
             ["Play {title}.", "Play {title} by {artist}.", "Put on {title} from {artist}."]),
        Tool(["set_shuffle", "shuffle"], ["Turn shuffle on or off."],
             {"on": Param(["on", "enabled"], "boolean", ["true for on"], boolean(["on"], ["off"]))},
             ["Turn shuffle {on}.", "Shuffle {on} please."]),
    ],
    "calendar": [
        Tool(["create_event", "add_event", "schedule"], ["Add an event to the calendar."],
             {"title": Param(["title", "name"], "string", ["Event"], pick(EVENTS)),
              "date": Param(["date", "day"], "string", ["Date"], date_value),
              "time": Param(["time", "at"], "string", ["HH:MM"], clock_time)},
             ["Add {title} on {date} at {time}.", "Schedule {title} for {date} at {time}."]),
    ],
    "weather": [
        Tool(["get_weather", "weather", "forecast"], ["Get the weather for a city."],
             {"city": Param(["city", "location", "place"], "string", ["City"], pick(CITIES))},
             ["What is the weather in {city}?", "Weather for {city} please.", "Is it raining in {city}?"]),
    ],
    "tasks": [
        Tool(["create_task", "add_todo", "new_task"], ["Create a to-do task."],
             {"title": Param(["title", "task"], "string", ["What to do"], pick(SUBJECTS)),
              "priority": Param(["priority", "level"], "string", ["Priority"],
                                enum_value([["low"], ["normal"], ["high"]]), enum=PRIORITY_ENUM)},
             ["Add a {priority} priority task: {title}.", "New {priority} task {title}."]),
    ],
}

SENTIMENT_POOLS = [REVIEWS_POS, REVIEWS_NEG, REVIEWS_NEU]
SENTIMENT_REPLIES = ["Labelled.", "Saved the label.", "Done."]


class ToolVariant:
    """A tool as one conversation sees it: its name, parameter names, enum spellings."""

    def __init__(self, tool, rng, nonsense_rate):
        self.tool = tool
        self.name = nonsense_name(rng) if rng.random() < nonsense_rate else rng.choice(tool.names)
        self.desc = rng.choice(tool.descs)
        keys = list(tool.params)
        self.param_names = {}
        used = set()
        for key in keys:
            p = tool.params[key]
            for _ in range(20):
                n = nonsense_name(rng) if rng.random() < nonsense_rate else rng.choice(p.names)
                if n not in used:
                    break
            used.add(n)
            self.param_names[key] = n
        self.enums = {k: list(rng.choice(p.enum)) for k, p in tool.params.items() if p.enum}
        self.order = keys[:]
        rng.shuffle(self.order)
        self.enum_order = {}  # key -> the schema's order of the enum values, when reshuffled

    def shuffle_enums(self, rng):
        """Lists the enum values in a random order, so that their position says nothing."""
        for key, values in self.enums.items():
            self.enum_order[key] = rng.sample(values, len(values))

    def schema_enum(self, key):
        return self.enum_order.get(key, self.enums[key])

    def schema(self):
        props = {}
        for key in self.order:
            p = self.tool.params[key]
            name = self.param_names[key]
            prop = {"type": p.ptype}
            if p.items:
                prop["items"] = {"type": p.items}
            if key in self.enums:
                prop["enum"] = self.schema_enum(key)
            if name not in p.names:  # a nonsense name carries its meaning in the description
                prop["description"] = p.descs[0]
            props[name] = prop
        required = [self.param_names[k] for k in self.order if self.tool.params[k].required]
        return {"name": self.name, "description": self.desc,
                "parameters": {"type": "object", "properties": props, "required": required}}


def fill_query(variant, rng, split):
    """One call of this tool variant: (query text, arguments)."""
    tool = variant.tool
    if tool.names[0] == "classify_sentiment":
        i = rng.randrange(3)
        text = rng.choice(SENTIMENT_POOLS[i])
        key = "label"
        return rng.choice(tool.queries).format(label=text), {variant.param_names[key]: variant.enums[key][i]}
    template = rng.choice(tool.queries)
    phrases, args = {}, {}
    for key, p in tool.params.items():
        if "{" + key + "}" not in template:
            continue
        value, phrase = p.sample(rng, split, variant.enums.get(key))
        if key in ("from", "to", "base", "quote", "origin", "destination"):
            # two slots of one call must differ
            while value in [args.get(variant.param_names[k]) for k in tool.params if k != key]:
                value, phrase = p.sample(rng, split, variant.enums.get(key))
        phrases[key] = phrase
        args[variant.param_names[key]] = value
    # Keep the call's key order = the schema's order (the canonical rendering).
    ordered = {variant.param_names[k]: args[variant.param_names[k]] for k in variant.order
               if variant.param_names[k] in args}
    text = template.format(**phrases)
    return text[0].upper() + text[1:], ordered


def result_for(answers, rng):
    if rng.random() < 0.5:
        return {"status": "ok"}
    return {"status": "ok", "id": rng.randint(1, 999)}


class ConversationGenerator:
    """generate(index) is a pure function of (seed, split, index)."""

    def __init__(self, seed, split="train", domains=None, min_turns=10, max_turns=40,
                 off_topic_rate=0.25, nonsense_rate=0.2, multi_rate=0.12, system_rate=0.15,
                 random_id_rate=0.0, overlap_rate=0.0):
        self.seed = seed
        self.split = split
        self.domains = domains if domains is not None else DOMAINS
        self.min_turns = min_turns
        self.max_turns = max_turns
        self.off_topic_rate = off_topic_rate
        self.nonsense_rate = nonsense_rate
        self.multi_rate = multi_rate
        self.system_rate = system_rate
        self.random_id_rate = random_id_rate
        self.overlap_rate = overlap_rate

    def tool_set(self, rng, nonsense_rate):
        names = sorted(self.domains)
        kind = rng.random()
        if kind < 0.15:  # routing among many tools
            tools = [t for d in names for t in self.domains[d]]
            chosen = rng.sample(tools, min(len(tools), rng.randint(8, 12)))
        else:
            main = rng.choice(names)
            chosen = list(self.domains[main])
            others = [t for d in names if d != main for t in self.domains[d]]
            chosen += rng.sample(others, min(len(others), rng.randint(0, 3)))
        rng.shuffle(chosen)
        return [ToolVariant(t, rng, nonsense_rate) for t in chosen]

    def generate(self, index, max_turns=None, aux_rate=0.0):
        """Conversation `index`. max_turns caps its length (the curriculum); aux_rate replaces
        that share of its turns by auxiliary retrieval turns (needle_aux.py). Random-ID
        conversations (random_id_rate) name every tool and parameter with fresh nonsense and
        reshuffle the enum values; in overlap_rate of all conversations each description names
        the words of the queries it shares none with (word_overlap.py). Those choices draw from a
        second generator, so that without them a conversation is exactly what it always was (the
        tokenizer and the suites)."""
        rng = random.Random("%d/%s/%d" % (self.seed, self.split, index))
        extra = random.Random("extra/%d/%s/%d" % (self.seed, self.split, index))
        random_ids = self.random_id_rate > 0 and extra.random() < self.random_id_rate
        variants = self.tool_set(rng, 1.0 if random_ids else self.nonsense_rate)
        if random_ids:
            for v in variants:
                v.shuffle_enums(extra)
        if self.overlap_rate > 0 and extra.random() < self.overlap_rate:
            for v in variants:
                v.desc = word_overlap.with_query_words(v.desc, v.tool.queries)
        if max_turns is None:
            n_turns = rng.randint(self.min_turns, self.max_turns)
        else:
            hi = max(1, min(self.max_turns, max_turns))
            n_turns = rng.randint(min(self.min_turns, max(1, hi // 2)), hi)
        off_pool = OFF_TOPIC if self.split == "train" else OFF_TOPIC_EVAL + OFF_TOPIC
        turns = []
        last_tool = None
        for _ in range(n_turns):
            if aux_rate and extra.random() < aux_rate:
                turns.append(needle_aux.aux_turn(extra, variants))
                continue
            r = rng.random()
            if r < self.off_topic_rate:
                q, reply = rng.choice(off_pool)
                turns.append({"query": q, "answers": [], "result": None, "reply": reply})
                continue
            # Prefer a tool other than the previous turn's: the recent window then holds no
            # copy of the call to imitate, only the pinned tool block does.
            candidates = [v for v in variants if v.name != last_tool] or variants
            if r < self.off_topic_rate + self.multi_rate and len(variants) > 1:
                a = rng.choice(candidates)
                if rng.random() < 0.5:
                    calls = [(a, fill_query(a, rng, self.split)) for _ in range(rng.randint(2, 3))]
                else:
                    b = rng.choice([v for v in variants if v is not a])
                    calls = [(a, fill_query(a, rng, self.split)), (b, fill_query(b, rng, self.split))]
                texts = [c[1][0].rstrip(".?!:") for c in calls]
                joiner = rng.choice([" and ", ", then ", ". Also "])
                query = texts[0] + "".join(joiner + t[0].lower() + t[1:] for t in texts[1:]) + "."
                answers = [{"name": v.name, "arguments": qa[1]} for v, qa in calls]
            else:
                v = rng.choice(candidates)
                query, args = fill_query(v, rng, self.split)
                answers = [{"name": v.name, "arguments": args}]
            last_tool = answers[-1]["name"]
            turns.append({"query": query, "answers": answers, "result": result_for(answers, rng),
                          "reply": rng.choice(REPLIES_DONE)})
        conv = {"tools": [v.schema() for v in variants], "turns": turns}
        if rng.random() < self.system_rate:
            conv["system"] = "The user is %s. Home city: %s." % (
                rng.choice(split_pool(PEOPLE, self.split)), rng.choice(split_pool(CITIES, self.split)))
        return conv


def compact(value):
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)
